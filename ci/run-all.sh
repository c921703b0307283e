#!/usr/bin/env bash
# The main job: installs dependencies, builds, runs every case (profile
# given as $1, default ci) and writes the reports to cuproof-out/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ci/install-deps.sh
source ci/env.sh
cmake --preset default
cmake --build --preset default
./build/default/cuproof run --profile "${1:-ci}" --out "${OUT_DIR:-cuproof-out}"
