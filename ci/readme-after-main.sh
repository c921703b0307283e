#!/usr/bin/env bash
# The README's path as a newcomer walks it (issue 41): the main job alone
# (ci/run-all.sh: its dependencies, its build into build/default, a run or
# on this machine without a GPU the replay), then every block of README.md
# in order against that build and nothing else built (tests/
# docs_snippets_test.sh: install, replay, check, exec). It fails where a
# README block needs what the main job did not build (exec's injection
# library: the README's exec block exits 6 instead of 3). CI runs it
# first (ci/test.sh), before the tests' build adds to the same directory.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
bash ci/run-all.sh > build/main-job.log 2>&1 || {
    tail -30 build/main-job.log
    echo "readme-after-main: the main job failed (build/main-job.log)" >&2
    exit 1
}
tail -3 build/main-job.log
bash tests/docs_snippets_test.sh build/default/cuproof build/default . README.md
