#!/usr/bin/env bash
# Issue 28 on one GPU, in one device call: `cuproof run --runs 3` twice
# back to back and `compare` on the pair both ways (one build: no slower
# may come out), `cuproof ab` of the build against itself, and the
# torch_streams exec test TORCH times in a row (its warm-up fix). Logs and
# reports in $OUT/results.tar.gz.
#   CASES="multi-kernel" PAIRS=6 TORCH=5 WORK=1 ci/device-issue28.sh
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
cases=${CASES:-multi-kernel}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
bin=./build/default/cuproof
# SAME=0 leaves out the same-build runs and their comparisons.
for r in $([ "${SAME:-1}" = 1 ] && echo a b); do
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin run --runs 3 --max-time 0.5 --out "$out/runs-$r" $cases > "$out/runs-$r.log" 2>&1
    echo "run --runs 3 ($r): exit $?, $(( $(date +%s) - start )) s"
    grep -A12 "between-run spread" "$out/runs-$r.log" | head -12
done
for pair in $([ "${SAME:-1}" = 1 ] && echo "a-b b-a"); do
    pair=${pair/-/ }
    set -- $pair
    $bin compare "$out/runs-$1" "$out/runs-$2" > "$out/compare-$1$2.log" 2>&1
    echo "compare runs-$1 runs-$2: exit $?"
    cat "$out/compare-$1$2.log"
done
if [ "${PAIRS:-0}" -gt 0 ]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin ab "$bin" "$bin" $cases --pairs "$PAIRS" --min-pairs 5 --seed 7 --out "$out/ab" \
        > "$out/ab.log" 2>&1
    echo "ab self: exit $?, $(( $(date +%s) - start )) s"
    tail -12 "$out/ab.log"
    rm -rf "$out/ab"/p*-?/*.json.gz "$out/ab"/p*-?/*.perfetto.json "$out/ab"/p*-?/*.trace.json
fi
# WORK=1: 10% more work per kernel in multi-kernel (--param len=288512,
# 10.06% more), caught by compare on 3 runs a side and by ab, whose build B
# is this cuproof with the parameter added (a wrapper script).
if [ "${WORK:-0}" = 1 ]; then
    $bin run --runs 3 --max-time 0.5 --out "$out/work-base" multi-kernel > "$out/work-base.log" 2>&1
    $bin run --runs 3 --max-time 0.5 --out "$out/work-big" multi-kernel --param len=288512 \
        > "$out/work-big.log" 2>&1
    $bin compare "$out/work-base" "$out/work-big" > "$out/compare-work.log" 2>&1
    echo "compare base big (3 runs a side): exit $?"
    cat "$out/compare-work.log"
    printf '#!/bin/sh\nexec %s "$@" --param len=288512\n' "$(realpath $bin)" > "$out/cuproof-big"
    chmod +x "$out/cuproof-big"
    $bin ab "$bin" "$out/cuproof-big" multi-kernel --pairs 8 --min-pairs 5 --seed 11 \
        --out "$out/ab-work" > "$out/ab-work.log" 2>&1
    echo "ab base big: exit $?"
    tail -10 "$out/ab-work.log"
    rm -rf "$out/ab-work"/p*
fi
export CUPROOF_REQUIRE_GPU=1
for i in $(seq 1 "${TORCH:-0}"); do
    ctest --test-dir build/default -R 'exec[.]torch_streams' --output-on-failure > "$out/torch-$i.log" 2>&1
    echo "torch_streams run $i: rc $?; $(grep -o 'measured [0-9.]* ratio' "$out/torch-$i.log" | head -1)"
done
rm -f "$out"/runs-?/*.trace.json "$out"/runs-?/*.perfetto.json "$out"/work-*/*.trace.json \
    "$out"/work-*/*.perfetto.json
device_pack
