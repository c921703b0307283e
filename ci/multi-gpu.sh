#!/usr/bin/env bash
# The many-GPU run (issue 8's figures): the GPU tests with -j 1 and then
# spread over every GPU through ctest's resource spec, the multi-gpu case in
# the full profile, and cuproof run --devices over all GPUs. Results and
# logs go under OUT_DIR (default gpu-out/multi); with OUT set (the device
# tool), they are also packed into $OUT/results.tar.gz after each stage.
#
#   ci/multi-gpu.sh [OUT_DIR]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
res=$(mkdir -p "${1:-$root/gpu-out/multi}" && cd "${1:-$root/gpu-out/multi}" && pwd)
cd "$root"
# shellcheck source=ci/common.sh
source ci/common.sh
CUPROOF_GPU_STAGE=tests CUPROOF_GPU_JOBS=1 ci/gpu.sh "$res/j1" > "$res/j1.log" 2>&1
echo "j1 exit: $?" >> "$res/j1.log"
cuproof_pack "$res"
CUPROOF_GPU_STAGE=tests ci/gpu.sh "$res/jn" > "$res/jn.log" 2>&1
echo "jn exit: $?" >> "$res/jn.log"
cuproof_pack "$res"
timeout 200 ./build/default/cuproof run multi-gpu --profile full --out "$res/multi-gpu-full" \
    > "$res/multi-gpu-full.log" 2>&1
echo "multi-gpu full exit: $?" >> "$res/multi-gpu-full.log"
cuproof_pack "$res"
devices=$(seq -s, 0 $(($(grep -c '^[0-9]' "$res/jn/gpus.txt") - 1)))
timeout 120 ./build/default/cuproof run vector-add grid-model mandelbrot conway-shared multi-gpu \
    --devices "$devices" --out "$res/devices" > "$res/devices.log" 2>&1
echo "devices exit: $?" >> "$res/devices.log"
cuproof_pack "$res"
grep -h "wall\|tests passed\|exit" "$res"/j1.log "$res"/jn.log
cat "$res/jn/placement.log"
cat "$res/multi-gpu-full.log" "$res/devices.log"
