#!/usr/bin/env bash
# Records the DDP programs of tests/exec/ddp_train.py on two GPUs under
# `cuproof exec` (issue 27): each mode's per-process traces, report and
# output, packed into $OUT/results.tar.gz (the device tool returns few
# files). Run on a machine of two GPUs, from the repository root, with
# .gpu-deps carried. Builds only the tool and the injection library.
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi -L > "$out/gpus.txt" 2>&1
python3 -c 'import torch; print(torch.__version__, torch.cuda.nccl.version(), torch.cuda.device_count())' \
    > "$out/torch.txt" 2>&1
cmake --preset main > "$out/configure.log" 2>&1 &&
    cmake --build build/default --target cuproof cuproof_inject > "$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; exit 1; }
export OMP_NUM_THREADS=1 NCCL_DEBUG=WARN
for mode in overlap serial straggler; do
    start=$(date +%s)
    ./build/default/cuproof exec --out "$out/$mode" --keep-going \
        --expect-file tests/exec/ddp_overlap.expect --expect 'every rank: range(step): kernels >= 10' \
        --timeout 240 \
        -- python3 -m torch.distributed.run --nproc_per_node=2 tests/exec/ddp_train.py \
        --mode "$mode" > "$out/$mode.log" 2>&1
    rc=$?
    ./build/default/cuproof export "$out/$mode/proc" "$out/$mode/rec" --format rec > /dev/null 2>&1
    rm -f "$out/$mode"/*.trace.json "$out/$mode"/*.perfetto.json
    echo "$mode: exec exit $rc, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    tail -4 "$out/$mode.log"
done
device_pack
