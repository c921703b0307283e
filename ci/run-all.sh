#!/usr/bin/env bash
# The main job: installs its dependencies (not the tests'), builds what
# every README path needs (preset main, into build/default where the
# README looks: the cuproof tool, libcuproof_inject.so that exec loads, and
# all that `cmake --install build/default` installs; no tests, fuzzers or
# test programs), then on a GPU machine runs
# every case (profile given as $1, default ci) and writes the reports to
# cuproof-out/ (OUT_DIR). Without a GPU it replays the committed recording
# of an H100 run instead (samples/recordings/h100-ci.tar.gz), so that the
# first minute shows a real report: metrics, timings and declared checks
# recomputed from the recorded traces and samples, labelled as a replay.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/common.sh
cuproof_build main
out=${OUT_DIR:-cuproof-out}
if ./build/default/cuproof gpus > /dev/null 2>&1; then
    ./build/default/cuproof run --profile "${1:-ci}" --out "$out"
else
    echo "cuproof: no GPU here: replaying a recording of the ci profile on an H100" \
        "(samples/recordings/h100-ci.tar.gz); on a GPU machine this command runs the cases"
    mkdir -p "$out/recording"
    tar -xzf samples/recordings/h100-ci.tar.gz -C "$out/recording"
    ./build/default/cuproof replay "$out/recording" --out "$out"
fi
