#!/usr/bin/env bash
# The test command: installs dependencies, builds (default preset), runs
# every test. With no GPU the GPU tests report skipped, never passed.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/common.sh
cuproof_build default
ctest --preset default -j "$(nproc)"
