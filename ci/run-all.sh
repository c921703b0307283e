#!/usr/bin/env bash
# The main job: installs dependencies, builds, runs every case (profile
# given as $1, default ci) and writes the reports to cuproof-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/common.sh
cuproof_build default
./build/default/cuproof run --profile "${1:-ci}" --out "${OUT_DIR:-cuproof-out}"
