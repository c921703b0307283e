#!/usr/bin/env bash
# What one call of the device tool runs: ci/gpu.sh, then a check that the
# harness still runs under Nsight Systems (where CUPTI may be taken), with
# everything packed into $OUT/results.tar.gz (the tool returns few files).
# The archive is rewritten after every stage and each stage is time-boxed,
# so a call that runs out of time still returns what was done.
#
#   ci/device-run.sh [suite|extras|all]    (default all)
#
# suite is ci/gpu.sh alone (build, ctest -L gpu, the full profile: about
# nine minutes with every case); extras is everything after it and needs a
# build from an earlier call on the same machine. One call has ten minutes.
set -uo pipefail
stage=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
res=/tmp/cuproof-results
rm -rf "$res" && mkdir -p "$res"
cd "$root"
# shellcheck source=ci/common.sh
source ci/common.sh
if [ "$stage" != extras ]; then
    ci/gpu.sh "$res" > "$res/gpu.log" 2>&1
    echo "gpu.sh exit: $?" | tee -a "$res/gpu.log"
    cuproof_pack "$res"
fi
if [ "$stage" = suite ]; then
    tail -40 "$res/gpu.log"
    exit 0
fi
if [ -f .gpu-deps/env.sh ]; then
    # shellcheck disable=SC1091
    source .gpu-deps/env.sh
fi
# Every case but host-threads (a minute and more per run of it), for the
# stages that only need breadth.
quick=$(./build/default/cuproof list | awk '$1 != "host-threads" {print $1}' | tr '\n' ' ')

nsys=$(cuproof_nsys)
if [ -n "$nsys" ]; then
    timeout 300 "$nsys" profile --trace=cuda,nvtx -o "$res/nsys-vector-add" --force-overwrite true \
        ./build/default/cuproof run vector-add multi-kernel --out "$res/under-nsys" > "$res/nsys.log" 2>&1
    echo "nsys exit: $?" >> "$res/nsys.log"
    rm -f "$res"/*.qdstrm "$res"/*.nsys-rep
fi
cuproof_pack "$res"
# Flakiness: the GPU tests three more times, stopping at the first failure.
CUPROOF_REQUIRE_GPU=1 timeout 200 ctest --test-dir build/default -L gpu -E host_threads \
    --repeat until-fail:3 --output-on-failure > "$res/ctest-repeat.log" 2>&1
echo "repeat exit: $?" >> "$res/ctest-repeat.log"
cuproof_pack "$res"
# The ci profile's traces are small enough to keep as CPU-test fixtures.
timeout 200 ./build/default/cuproof run --profile ci --out "$res/ci" > "$res/run-ci.log" 2>&1
echo "ci exit: $?" >> "$res/run-ci.log"
cuproof_pack "$res"
# Untraced mode on a real GPU: trace-based checks must be skipped, not passed.
# shellcheck disable=SC2086
CUPROOF_NO_TRACE=1 timeout 120 ./build/default/cuproof run $quick --out "$res/untraced" \
    > "$res/untraced.log" 2>&1
echo "untraced exit: $?" >> "$res/untraced.log"
cuproof_pack "$res"
# Streams alias onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 by
# default): the same case with 32, for comparison.
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 60 ./build/default/cuproof run multi-kernel-events --profile full \
    --out "$res/conn32" > "$res/conn32.log" 2>&1
echo "conn32 exit: $?" >> "$res/conn32.log"
# Memory errors and leaks in the cheap case (the sanitizer suite is ci/ work of its own).
timeout 120 compute-sanitizer --tool memcheck --leak-check full ./build/default/cuproof run vector-add conway-streams grid-model elementwise-vs-handwritten mandelbrot conway-global conway-shared context-manual --no-trace \
    --repeat 1 --out "$res/memcheck" > "$res/memcheck.log" 2>&1
echo "memcheck exit: $?" >> "$res/memcheck.log"
cuproof_pack "$res"
tail -60 "$res/gpu.log"
echo ---- nsys; tail -15 "$res/nsys.log" 2>/dev/null
echo ---- repeat; tail -4 "$res/ctest-repeat.log"
echo ---- ci; tail -8 "$res/run-ci.log"
echo ---- untraced; cat "$res/untraced.log"
echo ---- memcheck; tail -6 "$res/memcheck.log"
echo ---- conn32; cat "$res/conn32.log"
