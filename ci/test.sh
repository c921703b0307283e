#!/usr/bin/env bash
# The test command: first the README's path after the main job alone
# (ci/readme-after-main.sh: what a newcomer runs, on the main job's build),
# then installs the tests' dependencies, builds (default preset, into the
# same build/default), runs every test, then fuzzes the trace reader for
# 30 s. With no GPU the GPU tests report skipped, never passed.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/common.sh
bash ci/readme-after-main.sh
cuproof_build default
ctest --preset default -j "$(nproc)"
# The trace reader under libFuzzer, for a bounded time.
FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash ci/fuzz.sh
