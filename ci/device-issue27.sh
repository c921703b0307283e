#!/usr/bin/env bash
# Issue 27 on a machine of two GPUs, in one device call: build, the GPU
# tests (cases, multi-gpu, every exec program, the DDP programs under
# torchrun) RUNS times in a row, then each DDP mode DDP more times under
# `cuproof exec` with the per-rank expectations, for the spread of the
# figures. Everything lands in $OUT/results.tar.gz (the device tool
# returns few files).
# DDPTESTS=N runs the distributed tests and multi-gpu N more times.
# HOSTS=1 adds ci/device-hosts.sh: two hosts simulated on the two GPUs.
#   RUNS=1 DDP=3 HOSTS=1 ci/device-issue27.sh   (on the device, repository root, .gpu-deps carried)
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$out/nvidia-smi.txt" 2>&1
python3 -c 'import torch; print(torch.__version__, torch.cuda.nccl.version(), torch.cuda.device_count())' \
    > "$out/torch.txt" 2>&1
cat "$out/nvidia-smi.txt" "$out/torch.txt"
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
export CUPROOF_REQUIRE_GPU=1 OMP_NUM_THREADS=1 NCCL_DEBUG=WARN
for i in $(seq 1 "${RUNS:-1}"); do
    start=$(date +%s)
    ctest --test-dir build/default -L gpu --output-on-failure > "$out/ctest-gpu-$i.log" 2>&1
    rc=$?
    echo "ctest -L gpu run $i: rc $rc, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    grep -E "tests passed|Not Run|Failed|\(Skipped\)" "$out/ctest-gpu-$i.log" | head -20
    grep -E "multi-gpu|ddp" "$out/ctest-gpu-$i.log" | head -8
done
# The distributed tests alone, again (their spread): DDPTESTS more times.
for i in $(seq 1 "${DDPTESTS:-0}"); do
    start=$(date +%s)
    ctest --test-dir build/default -R 'exec[.]ddp|case[.]multi-gpu' --output-on-failure \
        > "$out/ctest-ddp-$i.log" 2>&1
    echo "ctest -R ddp|multi-gpu run $i: rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    grep -E "tests passed|Passed|Failed" "$out/ctest-ddp-$i.log" | head -8
done
for i in $(seq 1 "${DDP:-0}"); do
    for mode in overlap serial straggler; do
        d="$out/ddp-$mode-$i"
        start=$(date +%s)
        timeout 150 ./build/default/cuproof exec --out "$d" --keep-going \
            --expect-file tests/exec/ddp_overlap.expect \
            --expect 'every rank: range(step): kernels >= 10' \
            --expect 'straggler_lag_ns > 1500000' --expect 'collective_start_spread_ns >= 0' \
            --timeout 120 \
            -- python3 -m torch.distributed.run --nproc_per_node=2 tests/exec/ddp_train.py \
            --mode "$mode" > "$d.log" 2>&1
        rc=$?
        rm -rf "$d"/proc "$d"/*.perfetto* "$d"/*.trace.json
        echo "ddp $mode run $i: exit $rc, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
        grep -E "worst rank|straggl|collective|^ +[0-9] " "$d.log" | head -10
    done
done
if [ "${HOSTS:-0}" = 1 ]; then
    BIN=build/default/cuproof PACK=0 OUT="$out/hosts-sim" bash ci/device-hosts.sh
fi
device_pack
