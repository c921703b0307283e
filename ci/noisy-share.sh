#!/usr/bin/env bash
# What compare's `noisy` share can be, from the spread between passes alone
# (issue 28; samples/h100-layout/README.md, "What the spread allows"):
# ci/bench/noisy_share.c's table over spreads shared by 20 variants, then the
# spreads measured in the committed archives (ci/pass-spreads.py), each
# fed to the same statistics at 3, 5 and 9 runs a side. No GPU; about 8
# minutes on two cores. Writes samples/h100-layout/noisy-share.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset default >/dev/null
cmake --build --preset default --target noisy_share >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=samples/h100-layout/noisy-share.txt
bench=./build/default/noisy_share
spreads() { # NAME DIR...: the spreads, and their median, 10th and 90th percentile
    python3 ci/pass-spreads.py "${@:2}" > "$tmp/$1.sp"
    sort -k2 -g "$tmp/$1.sp" | awk -v n="$1" '{a[NR] = $2}
        END {printf "%s: %d variants, pass spread median %.1f%%, 10th %.1f%%, 90th %.1f%%\n",
             n, NR, 100 * a[int(NR / 2) + 1], 100 * a[int(NR * 0.1) + 1], 100 * a[int(NR * 0.9)]}'
}
{
    echo "# ci/noisy-share.sh at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d)"
    echo "# identical builds: noisy share and false slower+faster (of 200 trials x"
    echo "# the variants); a build 10% slower: share called slower, share noisy"
    echo
    echo "## every variant spreading alike"
    "$bench"
    echo
    echo "## the spreads measured on the H100 (committed archives)"
    for a in fixed-random-12 ci-five-fixed fixed-s3-r9-5; do
        mkdir "$tmp/$a"
        tar xzf "samples/h100-layout/$a.tar.gz" -C "$tmp/$a"
    done
    lay=$tmp/fixed-random-12/build/lay
    spreads fixed-random-12 $(for i in $(seq 1 12); do echo "$lay/fixed-$i"; done)
    "$bench" "$tmp/fixed-random-12.sp" 3 5 9
    mkdir "$tmp/g3"
    python3 ci/group-passes.py "$tmp/g3" g3 3 3 $(for i in $(seq 1 12); do echo "$lay/fixed-$i"; done) >/dev/null
    spreads fixed-random-12-3-processes "$tmp"/g3/g3-*
    "$bench" "$tmp/fixed-random-12-3-processes.sp" 3 5 9
    spreads ci-five-fixed "$tmp"/ci-five-fixed/build/i28/ci-{1,2,3,4,5}
    "$bench" "$tmp/ci-five-fixed.sp" 3 5 9
    spreads fixed-s3-r9-5 $(ls -d "$tmp"/fixed-s3-r9-5/build/lay/fixed-* | grep -v '\.log$')
    "$bench" "$tmp/fixed-s3-r9-5.sp" 3 5 9
} > "$out"
echo "wrote $out"
