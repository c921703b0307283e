#!/usr/bin/env bash
# exec.overlap_regression (issue 28): a program that stops overlapping part
# of its copies is caught by `cuproof compare` as a trace-metric regression
# while its expectation still passes. streams_overlap runs 4 times as it
# is and 3 times with STREAMS_OVERLAP_ALONE=4 (its first 4 copies in with
# no kernel under them); every run must meet streams_overlap.expect
# (copy_kernel_overlap_ratio > 0.3). Then:
#   compare runs 1-2 against 3-4 (the program as it is): exit 0, no metric
#     moved (the negative control: the check can pass);
#   compare runs 1-3 against the 3 runs overlapping less: exit 1, with
#     "towards failing 'copy_kernel_overlap_ratio > 0.3'".
# Skipped (77) where cuproof exec finds no GPU.
#   overlap_regression.sh CUPROOF PROGRAM EXPECT_FILE OUT_DIR
set -uo pipefail
cuproof=$1 program=$2 expect=$3 out=$4
rm -rf "$out" && mkdir -p "$out" || exit 1

exec_one() { # NAME [ENV=VALUE]
    local name=$1
    shift
    env "$@" "$cuproof" exec --skip-without-gpu --out "$out/$name" --expect-file "$expect" \
        -- "$program" > "$out/$name.log" 2>&1
    local rc=$?
    [ "$rc" = 77 ] && { echo "overlap_regression: skipped: no GPU"; exit 77; }
    if [ "$rc" != 0 ]; then
        echo "overlap_regression: $name: cuproof exec exited $rc, not 0 (its expectations must hold)"
        cat "$out/$name.log"
        exit 1
    fi
    grep -o 'copy_kernel_overlap_ratio > 0.3.*' "$out/$name.log" | head -1 | sed "s/^/$name: /"
}

for i in 1 2 3 4; do exec_one base$i; done
for i in 1 2 3; do exec_one alone$i STREAMS_OVERLAP_ALONE=4; done

"$cuproof" compare --old "$out/base1" --old "$out/base2" --new "$out/base3" --new "$out/base4" \
    > "$out/compare-same.log" 2>&1
rc=$?
cat "$out/compare-same.log"
if [ "$rc" != 0 ] || grep -q '^metric .*copy_kernel_overlap_ratio' "$out/compare-same.log"; then
    echo "overlap_regression: the program against itself: exit $rc or the overlap moved"
    exit 1
fi

"$cuproof" compare --old "$out/base1" --old "$out/base2" --old "$out/base3" \
    --new "$out/alone1" --new "$out/alone2" --new "$out/alone3" > "$out/compare-less.log" 2>&1
rc=$?
cat "$out/compare-less.log"
if [ "$rc" != 1 ]; then
    echo "overlap_regression: overlapping less: compare exited $rc, not 1"
    exit 1
fi
if ! grep -q "copy_kernel_overlap_ratio .*regression: towards failing 'copy_kernel_overlap_ratio > 0.3'" \
    "$out/compare-less.log"; then
    echo "overlap_regression: overlapping less: no trace-metric regression named"
    exit 1
fi
echo "overlap_regression: caught, and not raised between runs of the same program"
