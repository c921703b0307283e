#!/usr/bin/env bash
# The test command: installs dependencies, builds (default preset), runs
# every test, then fuzzes the trace reader for 30 s. With no GPU the GPU
# tests report skipped, never passed.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/common.sh
cuproof_build default
ctest --preset default -j "$(nproc)"
# The trace reader under libFuzzer, for a bounded time.
FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash ci/fuzz.sh
