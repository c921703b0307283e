#!/usr/bin/env bash
# Issue 27 part 2 on a GPU, in one device call (about 5 minutes with the
# build): the exec GPU tests, then two ranks of a real program
# (tests/exec/nvtx_ranges.cu, each its own process with RANK set) under
# cuproof exec: every rank, rank spread, rank(1) range(step), a missing
# rank (fails), a rank claimed twice (exit 3) and the rec form. Not yet
# run: the session that wrote it had no device time left.
#   ci/device-ranks.sh            (on the device, from the repository root)
set -uo pipefail
# shellcheck disable=SC1091
source .gpu-deps/env.sh
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
if ! { cmake --preset default > "$out/configure.log" 2>&1 &&
        cmake --build --preset default -j16 > "$out/build.log" 2>&1; }; then
    tail -30 "$out/build.log"
    exit 1
fi
echo "build: $(( $(date +%s) - start )) s"
export CUPROOF_REQUIRE_GPU=1
ctest --test-dir build/default -L exec -j4 --output-on-failure > "$out/ctest-exec.log" 2>&1
echo "ctest -L exec: rc $?"; grep -E 'tests passed|Failed' "$out/ctest-exec.log" | head
p=./build/default/tests/exec/nvtx_ranges
./build/default/cuproof exec --out "$out/ranks" \
  --expect 'every rank: range(step): kernels >= 5' \
  --expect 'every rank: range(step): copy_kernel_overlap_ratio > 0.3' \
  --expect 'rank spread: range(step): kernels == 0' \
  --expect 'rank(1) range(step): peak_concurrent_kernels > 1' \
  --expect 'rank(2): kernels >= 1' \
  -- sh -c "RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 $p & RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 $p; wait" 2>&1 | tail -20
echo "exec rc ${PIPESTATUS[0]}"
head -c 400 "$out"/ranks/proc/*.proc.jsonl | grep schema
# Two processes claiming one rank: exit 3.
./build/default/cuproof exec --out "$out/twice" --expect 'kernels >= 1' \
  -- sh -c "RANK=0 $p & RANK=0 $p; wait" 2>&1 | tail -3
echo "twice rc ${PIPESTATUS[0]}"
# The rec form.
./build/default/cuproof exec --format rec --out "$out/rec" \
  --expect 'every rank: range(step): kernels >= 5' \
  -- sh -c "SLURM_PROCID=0 $p & SLURM_PROCID=1 $p; wait" 2>&1 | grep -E 'every rank|exit'
rm -rf "$out/ranks" "$out/twice" "$out/rec"
