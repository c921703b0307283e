#!/usr/bin/env bash
# What tracing costs a launch-bound program (issue 30): the CuPy loop
# ci/bench/long_exec.py and the PyTorch loop ci/bench/torch_small_ops.py
# (STEPS steps each, default 3000) run plain, under `cuproof exec` in each
# file form (--format jsonl, the default, and rec), under exec with every
# API call recorded (`all`: --api all, as exec was before its filter) and
# under `nsys profile --trace=cuda,nvtx`, in turn (plain, jsonl, rec, all,
# nsys, plain, ...) so that drift hits every mode alike, RUNS rounds
# (default 5). Exec's own line of what tracing cost (its "tracing:" line)
# goes to OUT_DIR/tracing-cost.txt for each exec run. Two figures a run:
# the whole wall time, and the loop's own time as the program prints it
# ("N steps in X s"). Medians, with the least and most, in OUT_DIR
# (launch-bound.txt and .json). The goal: the loop within 5% of plain,
# the whole exec wall time at most 1.2x plain.
#
#   ci/bench/launch-bound.sh [OUT_DIR]
# PROGRAMS narrows the list (cupy torch); MODES the modes (plain jsonl rec
# all nsys, and the diagnostics of what each part costs: kernel and marker,
# those CUPTI kinds alone, CUPROOF_EXEC_KINDS; noapi, every kind but the
# API calls; nofollow, CUPROOF_EXEC_FOLLOW=0; k=KIND,KIND..., those kinds
# alone; hooks=driver and hooks=none, CUPROOF_EXEC_HOOKS); NSYS_ROUNDS (default 1) how many of the rounds include nsys,
# which takes 40 s to 2 min a run (for comparison, not the goal); a GPU
# machine with a built build/default is needed; nsys as ci/common.sh
# finds it, else anywhere, else left out.
set -uo pipefail
source "$(dirname "$0")/../common.sh"
bench_start "${1:-}"
runs=${RUNS:-5}
steps=${STEPS:-3000}
cuproof=build/default/cuproof
nsys=$(bench_nsys)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A cmd=([cupy]="python3 ci/bench/long_exec.py --steps $steps"
                [torch]="python3 ci/bench/torch_small_ops.py --steps $steps")
modes=${MODES:-plain jsonl rec all nsys}
[ -n "$nsys" ] || modes=${modes//nsys/}

# One run of program $1 in mode $2: "wall_ms loop_ms exit post_ms" on
# stdout, post_ms exec's whole post-processing from its tracing line (-
# for plain and nsys).
one() {
    local prog=${cmd[$1]} t rc
    t=$(date +%s%N)
    case $2 in
    plain) $prog > "$work/log" 2>&1 ;;
    jsonl | rec) $cuproof exec --format "$2" --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    all) $cuproof exec --api all --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    # Diagnostics: what each part of tracing costs (exec, JSON lines).
    kernel) CUPROOF_EXEC_KINDS=kernel $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    marker) CUPROOF_EXEC_KINDS=marker $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    noapi) CUPROOF_EXEC_KINDS=kernel,memcpy,memset,sync,stream,context,device,marker,overhead \
        $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    nofollow) CUPROOF_EXEC_FOLLOW=0 $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    k=*) CUPROOF_EXEC_KINDS=${2#k=} $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    hooks=*) CUPROOF_EXEC_HOOKS=${2#hooks=} $cuproof exec --out "$work/x" -- $prog > "$work/log" 2>&1 ;;
    nsys) "$nsys" profile --trace=cuda,nvtx -o "$work/n" --force-overwrite true $prog > "$work/log" 2>&1 ;;
    esac
    rc=$?
    local wall loop
    wall=$(bench_ms "$t")
    sed -n "s/^  tracing/$1 $2: tracing/p" "$work/log" >> "$out/tracing-cost.txt"
    loop=$(sed -n 's/.* steps in \([0-9.]*\) s.*/\1/p' "$work/log" | head -1)
    # "post-processing 1.14 s (...)", "... 850 ms", "... 373 µs": in ms.
    post=$(perl -CS -ne 'if (/post-processing ([\d.]+) (s|ms|µs)/) { printf "%.0f", $1 * ($2 eq "s" ? 1000 : $2 eq "ms" ? 1 : 0.001); exit }' "$work/log")
    echo "$wall $(awk -v s="${loop:-0}" 'BEGIN {printf "%.0f", s * 1000}') $rc ${post:--}"
}

summary() { # file of numbers: "median [least, most]"
    echo "$(bench_median < "$1") [$(sort -n "$1" | head -1), $(sort -n "$1" | tail -1)]"
}

{
    echo "launch-bound programs, $steps steps, $runs rounds; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); nsys: ${nsys:-none}"
    printf '%-6s %-6s %-28s %-28s %-24s %s\n' program mode "wall ms: median [range]" "loop ms: median [range]" "post-processing ms" "exits"
} | tee "$out/launch-bound.txt"
: > "$out/tracing-cost.txt"
echo "[" > "$out/launch-bound.json"
first=1
for p in ${PROGRAMS:-cupy torch}; do
    python3 -c "import $p" 2>/dev/null || { echo "$p: python3 cannot import $p: left out" | tee -a "$out/launch-bound.txt"; continue; }
    for m in $modes; do : > "$work/$m.wall"; : > "$work/$m.loop"; : > "$work/$m.rc"; : > "$work/$m.post"; done
    for i in $(seq "$runs"); do
        for m in $modes; do
            [ "$m" = nsys ] && [ "$i" -gt "${NSYS_ROUNDS:-1}" ] && continue
            read -r wall loop rc post < <(one "$p" "$m")
            echo "$wall" >> "$work/$m.wall"; echo "$loop" >> "$work/$m.loop"; echo "$rc" >> "$work/$m.rc"
            [ "$post" = - ] || echo "$post" >> "$work/$m.post"
        done
    done
    for m in $modes; do
        post=-
        [ -s "$work/$m.post" ] && post=$(summary "$work/$m.post")
        printf '%-6s %-6s %-28s %-28s %-24s %s\n' "$p" "$m" "$(summary "$work/$m.wall")" \
            "$(summary "$work/$m.loop")" "$post" "$(paste -sd, "$work/$m.rc")" | tee -a "$out/launch-bound.txt"
        [ $first -eq 1 ] || echo "," >> "$out/launch-bound.json"
        first=0
        printf '{"program":"%s","mode":"%s","steps":%d,"wall_ms":[%s],"loop_ms":[%s],"exits":[%s]}' \
            "$p" "$m" "$steps" "$(paste -sd, "$work/$m.wall")" "$(paste -sd, "$work/$m.loop")" \
            "$(paste -sd, "$work/$m.rc")" >> "$out/launch-bound.json"
    done
done
echo "]" >> "$out/launch-bound.json"
