#!/usr/bin/env bash
# What part of tracing costs the CuPy seed program (tests/exec/cupy_streams.py:
# 200 arrays, 600 records) its time (issue 30): the program run plain, under
# exec, under exec with every API call recorded (CUPROOF_EXEC_API=all), and
# under exec tracing NVTX alone (CUPROOF_EXEC_KINDS=marker), in turn, RUNS
# rounds (default 6); the wall time of each run and the program's own time as
# the launcher measured it ("the program ran N ms"). Medians and ranges in
# OUT_DIR/seed-parts.txt.
#   ci/bench/seed-parts.sh [OUT_DIR]
set -uo pipefail
source "$(dirname "$0")/../common.sh"
bench_start "${1:-}"
runs=${RUNS:-6}
cuproof=build/default/cuproof
prog="python3 tests/exec/cupy_streams.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
modes="plain exec all marker"
for i in $(seq "$runs"); do
    for m in $modes; do
        t=$(date +%s%N)
        case $m in
        plain) $prog > "$work/log" 2>&1 ;;
        exec) $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
        all) $cuproof exec --api all --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
        marker) CUPROOF_EXEC_KINDS=marker $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
        esac
        echo "$(bench_ms "$t")" >> "$work/$m.wall"
        sed -n 's/.*the program ran \([0-9.]*\) ms.*/\1/p' "$work/log" | head -1 >> "$work/$m.inner"
    done
done
{
    echo "CuPy seed program, $runs rounds; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    for m in $modes; do
        printf '%-7s wall ms %s [%s]' "$m" "$(bench_median < "$work/$m.wall")" "$(paste -sd, "$work/$m.wall")"
        [ -s "$work/$m.inner" ] && printf '   program ms %s [%s]' "$(bench_median < "$work/$m.inner")" "$(paste -sd, "$work/$m.inner")"
        echo
    done
} | tee "$out/seed-parts.txt"
