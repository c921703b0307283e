#!/usr/bin/env bash
# The one script for a GPU machine: configure, build, run the GPU tests,
# then every case in the full profile, writing reports and traces.
#
#   ci/gpu.sh [OUT_DIR]          (default: gpu-out)
#
# On an offline machine, stage the libraries first (../shared/tools/gpu-deps.sh
# writes .gpu-deps/); this script sources .gpu-deps/env.sh when it exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/gpu-out}" && cd "${1:-$root/gpu-out}" && pwd)
cd "$root"
if [ -f .gpu-deps/env.sh ]; then
    # shellcheck disable=SC1091
    source .gpu-deps/env.sh
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.txt"
cmake --preset default
cmake --build --preset default

# A GPU machine must run the GPU tests, not skip them.
export CUPROOF_REQUIRE_GPU=1
status=0
# ctest spreads the GPU tests over the GPUs through its resource
# allocation: each test asks for "gpus:1" and reads the GPU it was given
# from CTEST_RESOURCE_GROUP_0_GPUS. One slot per GPU, so no two tests
# share one and disturb each other's timings. CUPROOF_GPU_JOBS overrides
# the parallelism (1 to compare).
./build/default/cuproof gpus --ctest-spec "$out/gpus.json" | tee "$out/gpus.txt"
ngpus=$(grep -c '^[0-9]' "$out/gpus.txt")
jobs=${CUPROOF_GPU_JOBS:-$ngpus}
if [ "${CUPROOF_GPU_STAGE:-both}" != full ]; then
    start=$(date +%s%N)
    ctest --test-dir build/default -L gpu -j "$jobs" --resource-spec-file "$out/gpus.json" \
        --output-on-failure 2>&1 | tee "$out/ctest-gpu.log" || status=1
    ms=$((($(date +%s%N) - start) / 1000000))
    echo "ctest -L gpu: -j $jobs over $ngpus GPUs, wall $((ms / 1000)).$(printf %03d $((ms % 1000))) s" |
        tee -a "$out/ctest-gpu.log"
    # Where each test ran, as the tests print it.
    grep -ho 'cuproof-test: .* placed on GPU [0-9]* .*' \
        build/default/Testing/Temporary/LastTest.log | sort -t' ' -k6 | tee "$out/placement.log"
fi

# The installable package on a GPU: examples/my-cases built against an
# install of this build, its one case must pass (CUPROOF_REQUIRE_GPU=1).
if [ "${CUPROOF_GPU_STAGE:-both}" != full ]; then
    bash ci/example.sh build/default install > "$out/example.log" 2>&1 || status=1
    tail -5 "$out/example.log"
fi

# The full run goes ahead after a failed test: its report says why.
# CUPROOF_GPU_STAGE=tests or full runs only that half (one device call has
# ten minutes, and both halves together now take about that long).
stage=${CUPROOF_GPU_STAGE:-both}
if [ "$stage" != tests ]; then
    ./build/default/cuproof run --profile full --out "$out/full" 2>&1 | tee "$out/run-full.log" ||
        status=1
fi
exit $status
