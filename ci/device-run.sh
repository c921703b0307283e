#!/usr/bin/env bash
# What one call of the device tool runs: ci/gpu.sh, then a check that the
# harness still runs under Nsight Systems (where CUPTI may be taken), with
# everything packed into $OUT/results.tar.gz (the tool returns few files).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
res=/tmp/cuproof-results
rm -rf "$res" && mkdir -p "$res"
cd "$root"
ci/gpu.sh "$res" > "$res/gpu.log" 2>&1
echo "gpu.sh exit: $?" | tee -a "$res/gpu.log"

nsys=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
    timeout 300 "$nsys" profile --trace=cuda,nvtx -o "$res/nsys-vector-add" --force-overwrite true \
        ./build/default/cuproof run vector-add multi-kernel --out "$res/under-nsys" > "$res/nsys.log" 2>&1
    echo "nsys exit: $?" >> "$res/nsys.log"
    rm -f "$res"/*.qdstrm "$res"/*.nsys-rep
fi
# Flakiness: the GPU tests three more times, stopping at the first failure.
CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -L gpu --repeat until-fail:3 \
    --output-on-failure > "$res/ctest-repeat.log" 2>&1
echo "repeat exit: $?" >> "$res/ctest-repeat.log"
# The ci profile's traces are small enough to keep as CPU-test fixtures.
./build/default/cuproof run --profile ci --out "$res/ci" > "$res/run-ci.log" 2>&1
echo "ci exit: $?" >> "$res/run-ci.log"
# Untraced mode on a real GPU: trace-based checks must be skipped, not passed.
CUPROOF_NO_TRACE=1 ./build/default/cuproof run --out "$res/untraced" > "$res/untraced.log" 2>&1
echo "untraced exit: $?" >> "$res/untraced.log"
# Streams alias onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 by
# default): the same case with 32, for comparison.
CUDA_DEVICE_MAX_CONNECTIONS=32 ./build/default/cuproof run multi-kernel-events --profile full \
    --out "$res/conn32" > "$res/conn32.log" 2>&1
echo "conn32 exit: $?" >> "$res/conn32.log"
# Memory errors and leaks in the cheap case (the sanitizer suite is ci/ work of its own).
compute-sanitizer --tool memcheck --leak-check full ./build/default/cuproof run vector-add conway-streams grid-model elementwise-vs-handwritten mandelbrot conway-global conway-shared --no-trace \
    --repeat 1 --out "$res/memcheck" > "$res/memcheck.log" 2>&1
echo "memcheck exit: $?" >> "$res/memcheck.log"
tar -czf "${OUT:-/tmp}/results.tar.gz" -C "$res" . 2>/dev/null
tail -60 "$res/gpu.log"
echo ---- nsys; tail -15 "$res/nsys.log" 2>/dev/null
echo ---- repeat; tail -4 "$res/ctest-repeat.log"
echo ---- ci; tail -8 "$res/run-ci.log"
echo ---- untraced; cat "$res/untraced.log"
echo ---- memcheck; tail -6 "$res/memcheck.log"
echo ---- conn32; cat "$res/conn32.log"
