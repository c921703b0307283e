#!/usr/bin/env bash
# What cuproof exec costs a program: the wall time of each program of
# tests/exec (and the CuPy and PyTorch ones where they import) run plain,
# under `cuproof exec` and under `nsys profile --trace=cuda,nvtx`, in turn
# (plain, exec, nsys, plain, ...) so that drift hits all three alike;
# medians of RUNS runs (default 5). Two figures for exec: its whole wall
# time, and the program's own as the launcher measured it (inner).
# BENCH_NSYS_PYTHON=0 leaves nsys out for the Python programs (minutes
# each). A GPU machine with a built build/default is needed; nsys is
# found as ci/common.sh finds it, else anywhere (left out when there is none).
#
#   ci/bench/exec-overhead.sh [OUT_DIR]     writes OUT_DIR/exec-overhead.txt and .json
#
# The goal (issue 17): exec within 3% of plain on the CuPy seed program,
# and no more than a third of nsys's overhead.
set -uo pipefail
source "$(dirname "$0")/../common.sh"
bench_start "${1:-}"
runs=${RUNS:-5}
bin=build/default
cuproof=$bin/cuproof
nsys=$(bench_nsys)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# BENCH_PROGRAMS narrows the list (names as below, e.g. "streams_overlap cupy").
programs=()
for p in ${BENCH_PROGRAMS:-streams_overlap pageable_twin nvtx_ranges graph_launch fork_exec_children cupy torch}; do
    case "$p" in
    cupy | torch) python3 -c "import $p" 2>/dev/null && programs+=("python3 tests/exec/${p}_streams.py") ;;
    *) programs+=("$bin/tests/exec/$p") ;;
    esac
done


printf '%-44s %9s %9s %7s %9s %7s %9s %7s\n' program plain_ms exec_ms exec_% inner_ms inner_% nsys_ms nsys_% |
    tee "$out/exec-overhead.txt"
echo "[" > "$out/exec-overhead.json"
first=1
for prog in "${programs[@]}"; do
    : > "$work/plain"; : > "$work/exec"; : > "$work/nsys"; : > "$work/inner"
    for i in $(seq "$runs"); do
        t=$(date +%s%N); $prog > /dev/null 2>&1; bench_ms "$t" >> "$work/plain"
        t=$(date +%s%N); $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1; bench_ms "$t" >> "$work/exec"
        sed -n 's/^cuproof exec: the program ran \([0-9.]*\) ms.*/\1/p' "$work/log" >> "$work/inner"
        if [ -n "$nsys" ] && { [ "${BENCH_NSYS_PYTHON:-1}" = 1 ] || [ "${prog#python3}" = "$prog" ]; }; then
            t=$(date +%s%N)
            "$nsys" profile --trace=cuda,nvtx -o "$work/n" --force-overwrite true $prog > /dev/null 2>&1
            bench_ms "$t" >> "$work/nsys"
        fi
    done
    p=$(bench_median < "$work/plain"); e=$(bench_median < "$work/exec")
    n=$([ -s "$work/nsys" ] && bench_median < "$work/nsys" || echo 0)
    ep=$(awk -v a="$p" -v b="$e" 'BEGIN {printf "%.1f", (b - a) / a * 100}')
    np=$(awk -v a="$p" -v b="$n" 'BEGIN {printf "%.1f", (b > 0 ? (b - a) / a * 100 : 0)}')
    # The program's own wall time under exec, as the launcher measured it:
    # the rest of exec's time is the launcher's (CUDA's start to learn the
    # GPU, reading and analysing the trace, writing the reports).
    w=$(bench_median < "$work/inner")
    wp=$(awk -v a="$p" -v b="$w" 'BEGIN {printf "%.1f", (b - a) / a * 100}')
    printf '%-44s %9s %9s %7s %9s %7s %9s %7s\n' "$prog" "$p" "$e" "$ep" "$w" "$wp" "$n" "$np" |
        tee -a "$out/exec-overhead.txt"
    [ $first -eq 1 ] || echo "," >> "$out/exec-overhead.json"
    first=0
    printf '{"program":"%s","runs":%d,"plain_ms":%s,"exec_ms":%s,"inner_ms":%s,"nsys_ms":%s,"exec_overhead_pct":%s,"inner_overhead_pct":%s,"nsys_overhead_pct":%s,"plain":[%s],"exec":[%s],"inner":[%s],"nsys":[%s]}' \
        "$prog" "$runs" "$p" "$e" "$w" "$n" "$ep" "$wp" "$np" "$(paste -sd, "$work/plain")" \
        "$(paste -sd, "$work/exec")" "$(paste -sd, "$work/inner")" "$(paste -sd, "$work/nsys")" \
        >> "$out/exec-overhead.json"
done
echo "]" >> "$out/exec-overhead.json"
echo "medians of $runs runs each; nsys: ${nsys:-none}" | tee -a "$out/exec-overhead.txt"
