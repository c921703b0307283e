#!/usr/bin/env bash
# The comparisons of an issue-40 sample (samples/h200-gpu-time), made on
# the CPU from its recorded reports with the build at hand:
#   compares.txt         compare on every ordered pair of run1..3: exit
#                        status, verdicts, figures and the noisy variants
#   compare-param.txt    param0 against param5 (multi-kernel, 5% more work)
#   compare-hostbound.txt run1 against hb5pct and hbx4 (host-threads, 5%
#                        and 4x the work, judged on wall time)
#   figure-check-N.txt   ci/gpu-figure.py on each figure-check-N.json.gz
#
#     ci/gpu-time-compares.sh SAMPLE_DIR CUPROOF
set -uo pipefail
dir=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$dir"/*.json.gz; do gzip -dc "$f" > "$tmp/$(basename "${f%.gz}")"; done

verdicts() { grep -E '^(verdicts|figure):' "$1"; }
noisy() { awk '$0 ~ / noisy on / { print "  " $1 " " $2 }' "$1"; }

{
    echo "# cuproof compare on every ordered pair of run1..3, by $($bin --version 2>/dev/null | head -1)"
    for a in 1 2 3; do
        for b in 1 2 3; do
            [ $a = $b ] && continue
            "$bin" compare "$tmp/run$a.json" "$tmp/run$b.json" > "$tmp/out.txt" 2>&1
            echo "== compare run$a.json run$b.json: exit $?"
            verdicts "$tmp/out.txt"
            grep -q ' noisy on ' "$tmp/out.txt" && { echo "noisy:"; noisy "$tmp/out.txt"; }
        done
    done
} > "$dir/compares.txt"

"$bin" compare "$tmp/param0.json" "$tmp/param5.json" > "$tmp/out.txt" 2>&1
{ echo "== compare param0.json param5.json: exit $?"; grep -E '^multi-kernel|^(verdicts|figure):' "$tmp/out.txt"; } \
    > "$dir/compare-param.txt"

{
    for k in hb5pct hbx4; do
        "$bin" compare "$tmp/run1.json" "$tmp/$k.json" > "$tmp/out.txt" 2>&1
        echo "== compare run1.json $k.json (host-threads only in common): exit $?"
        grep -E '^host-threads|^verdicts:' "$tmp/out.txt"
    done
} > "$dir/compare-hostbound.txt"

for f in "$tmp"/figure-check-*.json; do
    n=$(basename "$f" .json)
    python3 "$(dirname "$0")/gpu-figure.py" "$f" > "$dir/$n.txt" 2>&1
done
tail -n 3 "$dir"/compares.txt "$dir"/compare-param.txt
