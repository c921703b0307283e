#!/usr/bin/env bash
# The launcher's own work after a long program (issue 30, part 3), on the
# CPU: a stand-in program writes a synthetic trace of RECORDS records
# (ci/bench/proc_gen.c, shaped like ci/bench/long_exec.py's CuPy loop) into
# its per-process file piece by piece, PIECES pieces with PAUSE seconds
# after each (as a traced process's flushes come), then exits; `cuproof
# exec` judges it with two expectations. Per file form (jsonl, rec), per
# records held (`default`: --keep-records' default, past which exec
# streams; `held`: all of them) and per mode, RUNS rounds interleaved:
#   after   this build, the files read while the program runs (the follower)
#   unfollowed  this build with CUPROOF_EXEC_FOLLOW=0: read after it
#   before  BEFORE=PATH, a cuproof built before the follower (e.g. of
#           commit 5e92250), when given
# Figures: the whole wall time, the program's own ("the program ran"),
# the launcher's post-processing as its tracing line gives it (from the
# program's exit to the end, the reports' writing included), its peak RSS
# (with its children's, which are small), and the share of records read
# while the program ran (report.json's tracing_cost). Medians with the
# least and most, in OUT_DIR/postprocess.txt.
#
#   ci/bench/postprocess.sh [OUT_DIR]
# CUPROOF (default build/default/cuproof), RECORDS (500000), RUNS (3),
# PIECES (40), PAUSE (0.1), FORMS (jsonl rec), KEEPS (default held), BEFORE.
set -uo pipefail
source "$(dirname "$0")/../common.sh"
bench_start "${1:-}"
records=${RECORDS:-500000}
runs=${RUNS:-3}
pieces=${PIECES:-40}
pause=${PAUSE:-0.1}
cuproof=${CUPROOF:-$root/build/default/cuproof}
gen=$root/build/default/proc_gen
cmake --build --preset default --target proc_gen > /dev/null || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
"$gen" "$records" "$work/src" > /dev/null || exit 1
name=bench.2147483647.proc
for form in jsonl rec; do
    ext=$form
    [ "$form" = rec ] && ext=cprec
    mkdir -p "$work/$form"
    split -n "$pieces" -d -a 3 "$work/src/$name.$ext" "$work/$form/piece."
done

# One run: "wall_ms program_ms post_ms rss_mb exit share" on stdout: the
# whole wall time, the program's ("the program ran"), the launcher's
# post-processing as its tracing line gives it (the program's exit to the
# end, the reports' writing included), its peak RSS, its exit status and
# the share of records read while the program ran.
one() { # form keep mode
    local form=$1 keep=() bin=$cuproof env=() ext=$1
    [ "$form" = rec ] && ext=cprec
    [ "$2" = held ] && keep=(--keep-records 2000000000)
    [ "$3" = unfollowed ] && env=(CUPROOF_EXEC_FOLLOW=0)
    [ "$3" = before ] && bin=$BEFORE
    rm -rf "$work/x"
    local prog="for p in '$work/$form'/piece.*; do cat \"\$p\" >> \"\$CUPROOF_EXEC_DIR/$name.$ext\"; sleep $pause; done"
    python3 - "$work/x" env CUDA_VISIBLE_DEVICES= "${env[@]}" "$bin" exec --format "$form" \
        --out "$work/x" "${keep[@]}" --expect 'kernels >= 1' \
        --expect 'range(step): copy_kernel_overlap_ratio > 0' -- sh -c "$prog" <<'EOF'
import json, re, resource, subprocess, sys, time
t = time.monotonic()
run = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
wall = (time.monotonic() - t) * 1000
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
def ms(text):  # a duration as cuproof's units table writes it
    value, unit = text.split()
    return float(value) * {"ns": 1e-6, "µs": 1e-3, "ms": 1, "s": 1e3}[unit]
prog = re.search(r"the program ran ([0-9.]+) ms", run.stdout)
post = re.search(r"post-processing ([0-9.]+ [nµm]?s)", run.stdout)
share = "-"
try:
    c = json.load(open(sys.argv[1] + "/report.json"))["tracing_cost"]
    if "records_read_during_run" in c:
        d, a = c["records_read_during_run"], c["records_read_after_exit"]
        share = f"{100 * d / max(1, d + a):.0f}%"
except (OSError, KeyError, ValueError):
    pass
print(f"{wall:.0f} {float(prog.group(1)) if prog else 0:.0f} {ms(post.group(1)) if post else 0:.0f} "
      f"{rss:.0f} {run.returncode} {share}")
EOF
}

summary() { # file of numbers: "median [least, most]"
    echo "$(bench_median < "$1") [$(sort -n "$1" | head -1), $(sort -n "$1" | tail -1)]"
}

modes="after unfollowed"
[ -n "${BEFORE:-}" ] && modes="$modes before"
{
    echo "cuproof exec's post-processing: $records synthetic records written in $pieces pieces, ${pause} s apart; $runs rounds; $(date -u +%Y-%m-%d) on $(hostname) ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); cuproof $(git rev-parse --short HEAD 2>/dev/null)${BEFORE:+, before: $BEFORE}"
    printf '%-5s %-7s %-10s %-22s %-22s %-22s %-8s %-7s %s\n' form keep mode "wall ms" "program ms" \
        "post-processing ms" "rss MB" "during" exits
} | tee "$out/postprocess.txt"
for form in ${FORMS:-jsonl rec}; do
    for keep in ${KEEPS:-default held}; do
        for m in $modes; do
            for f in wall prog post rss rc share; do : > "$work/$m.$f"; done
        done
        for i in $(seq "$runs"); do
            for m in $modes; do
                read -r wall prog post rss rc share < <(one "$form" "$keep" "$m")
                for f in wall prog post rss rc share; do echo "${!f}" >> "$work/$m.$f"; done
            done
        done
        for m in $modes; do
            printf '%-5s %-7s %-10s %-22s %-22s %-22s %-8s %-7s %s\n' "$form" "$keep" "$m" \
                "$(summary "$work/$m.wall")" "$(summary "$work/$m.prog")" \
                "$(summary "$work/$m.post")" "$(bench_median < "$work/$m.rss")" \
                "$(sort "$work/$m.share" | uniq | paste -sd/)" "$(paste -sd, "$work/$m.rc")" |
                tee -a "$out/postprocess.txt"
        done
    done
done
