#!/usr/bin/env bash
# compare on every ordered pair of the reports NAME-1 .. NAME-N in the
# current directory (samples/h100-layout's runs, unpacked): how many
# variant comparisons were noisy and slower, and how many pairs exited
# non-zero. Needs python3 and a built cuproof (CUPROOF, default
# build/default/cuproof of this checkout).
#   ci/layout-pairs.sh NAME N
set -euo pipefail
cfg=$1
n=$2
cuproof=${CUPROOF:-$(cd "$(dirname "$0")/.." && pwd)/build/default/cuproof}
tot=0 noisy=0 slower=0 nz=0
for a in $(seq 1 "$n"); do
    for b in $(seq 1 "$n"); do
        [ "$a" = "$b" ] && continue
        rc=0
        "$cuproof" compare "$cfg-$a" "$cfg-$b" --format json > /tmp/layout-pairs.json 2>/dev/null || rc=$?
        [ "$rc" != 0 ] && nz=$((nz + 1))
        read -r t nn s < <(python3 -c "
import json; v = json.load(open('/tmp/layout-pairs.json'))['variants']
print(len(v), sum(x['verdict'] == 'noisy' for x in v), sum(x['verdict'] == 'slower' for x in v))")
        tot=$((tot + t)) noisy=$((noisy + nn)) slower=$((slower + s))
    done
done
echo "$cfg: $tot comparisons, noisy $noisy ($(python3 -c "print(round(100 * $noisy / $tot, 1))")%), slower $slower, non-zero exits $nz"
