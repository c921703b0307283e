#!/usr/bin/env bash
# The test command: installs dependencies, builds (default preset), runs
# every test. With no GPU the GPU tests report skipped, never passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/install-deps.sh
source ci/env.sh
cmake --preset default
cmake --build --preset default
ctest --preset default -j "$(nproc)"
