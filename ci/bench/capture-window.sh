#!/usr/bin/env bash
# What a capture window saves (issue 43): the CuPy loop (long_exec.py) and
# the PyTorch small-op loop (torch_small_ops.py), 3000 steps each inside
# an NVTX range "step", run in turn ROUNDS times (default 5): plain, under
# `cuproof exec` tracing everything, and under `cuproof exec --capture
# range:step@1001-1050` (a window of 50 steps), so that drift hits all
# three alike. Two figures each: the loop's own time as the program prints
# it ("N steps in X s"), and the whole wall time of the command. Medians,
# and each form's over plain.
#
#   ci/bench/capture-window.sh [OUT_DIR]   writes OUT_DIR/capture-window.txt and .json
#
# The goal: with the window, the loop within 3% of plain and the whole
# wall within 1.1x plain (against +26-90% and 1.3-1.4x tracing everything).
# BENCH_CAPTURE sets the window, BENCH_STEPS the steps, BENCH_PROGRAMS the
# programs (cupy torch), BENCH_FORMS the forms (plain exec capture; also
# "never": a window that never opens, range:step@1000000, for what the
# hooks alone cost). Beside each form's median over plain's median, the
# median of the rounds' own ratios (form / plain of the same round): on a
# machine whose plain loop spreads by 10% or more from round to round the
# paired figure is the steadier one. BENCH_PIN (a taskset CPU list, e.g.
# 4-7) runs every form on those CPUs alike, and PYTHONHASHSEED is fixed
# (0 unless set) so that no form draws a luckier dict layout: on a VM whose
# processes each sit on a level of their own, both take a cause of those
# levels out of the comparison without favouring either form.

set -uo pipefail
source "$(dirname "$0")/../common.sh"
bench_start "${1:-}"
rounds=${ROUNDS:-5}
steps=${BENCH_STEPS:-3000}
capture=${BENCH_CAPTURE:-range:step@1001-1050}
cuproof=build/default/cuproof
work=$(mktemp -d)
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
pin=()
[ -n "${BENCH_PIN:-}" ] && pin=(taskset -c "$BENCH_PIN")
trap 'rm -rf "$work"' EXIT

programs=()
for p in ${BENCH_PROGRAMS:-cupy torch}; do
    case "$p" in
    cupy) python3 -c "import cupy" 2>/dev/null && programs+=("python3 ci/bench/long_exec.py --steps $steps") ;;
    torch) python3 -c "import torch" 2>/dev/null && programs+=("python3 ci/bench/torch_small_ops.py --steps $steps") ;;
    esac
done

# The loop's own seconds, as the program printed them.
loop_s() { sed -n 's/^[a-z_]*: [0-9]* steps in \([0-9.]*\) s.*/\1/p' "$1" | tail -1; }

forms=${BENCH_FORMS:-plain exec capture}
printf '%-52s %-8s %9s %8s %8s %9s %8s %8s\n' program form loop_s loop_% paired_% wall_s wall_x paired_x |
    tee "$out/capture-window.txt"
echo "[" > "$out/capture-window.json"
first=1
for prog in "${programs[@]}"; do
    for form in $forms; do : > "$work/$form.loop"; : > "$work/$form.wall"; done
    for i in $(seq "$rounds"); do
        for form in $forms; do
            t=$(date +%s%N)
            want=0
            case $form in
            plain) "${pin[@]}" $prog > "$work/log" 2>&1 ;;
            exec) "${pin[@]}" $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
            capture) "${pin[@]}" $cuproof exec --capture "$capture" --out "$work/c" -- $prog > "$work/log" 2>&1 ;;
            never) want=3; "${pin[@]}" $cuproof exec --capture range:step@1000000 --out "$work/n" -- $prog > "$work/log" 2>&1 ;;
            esac
            rc=$?
            echo "$(( ($(date +%s%N) - t) / 1000000 ))" >> "$work/$form.wall"
            loop_s "$work/log" >> "$work/$form.loop"
            [ "$rc" = "$want" ] || { echo "$prog ($form, round $i): exit $rc" >> "$out/capture-window-failures.txt"
                                     tail -5 "$work/log" >> "$out/capture-window-failures.txt"; }
        done
        # The last round's exec output of the window, kept as the sample's.
        [ "$i" = "$rounds" ] && cp "$work/log" "$out/capture-$(echo "$prog" | grep -o '[a-z_]*\.py' | sed 's/\.py$//').log"
    done
    pl=$(bench_median < "$work/plain.loop"); pw=$(bench_median < "$work/plain.wall")
    for form in $forms; do
        l=$(bench_median < "$work/$form.loop"); w=$(bench_median < "$work/$form.wall")
        lp=$(awk -v a="$pl" -v b="$l" 'BEGIN {printf "%.1f", (b - a) / a * 100}')
        wx=$(awk -v a="$pw" -v b="$w" 'BEGIN {printf "%.3f", b / a}')
        # The rounds' own ratios, form over plain of the same round.
        lr=$(paste "$work/$form.loop" "$work/plain.loop" | awk '{print ($1 / $2 - 1) * 100}' | bench_median)
        wr=$(paste "$work/$form.wall" "$work/plain.wall" | awk '{print $1 / $2}' | bench_median)
        printf '%-52s %-8s %9s %8s %8.1f %9.3f %8s %8.3f\n' "$prog" "$form" "$l" "$lp" "$lr" \
            "$(awk -v w="$w" 'BEGIN {print w / 1000}')" "$wx" "$wr" | tee -a "$out/capture-window.txt"
        [ $first -eq 1 ] || echo "," >> "$out/capture-window.json"
        first=0
        printf '{"program":"%s","form":"%s","capture":"%s","rounds":%d,"loop_s":[%s],"wall_ms":[%s],"loop_median_s":%s,"wall_median_ms":%s,"loop_vs_plain_pct":%s,"wall_vs_plain":%s,"loop_paired_pct":%s,"wall_paired":%s}' \
            "$prog" "$form" "$([ $form = capture ] && echo "$capture")" "$rounds" \
            "$(paste -sd, "$work/$form.loop")" "$(paste -sd, "$work/$form.wall")" "$l" "$w" "$lp" "$wx" \
            "$lr" "$wr" >> "$out/capture-window.json"
    done
done
echo "]" >> "$out/capture-window.json"
echo "medians of $rounds alternating rounds; window $capture; pinned to ${BENCH_PIN:-no CPUs}, PYTHONHASHSEED $PYTHONHASHSEED; $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" |
    tee -a "$out/capture-window.txt"
