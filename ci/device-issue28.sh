#!/usr/bin/env bash
# Issue 28 on one GPU, in device calls of at most 10 minutes, each step
# chosen by a variable (logs and reports in $OUT/results.tar.gz; the runs
# of the ci profile also kept in build/i28/ for a later call on the same
# machine, or carried back to a fresh one):
#   GPU=N     ctest -L gpu N times in a row (the first on a fresh machine)
#   TESTS=RE  ctest -R RE once (its log in tests.log)
#   CI="1 2"  cuproof run --profile ci --runs 3 into build/i28/ci-1, ci-2
#   PAIRS=1   compare every ordered pair of build/i28/ci-*; a summary of
#             each pair's verdicts (ci/compare-summary.py) in pairs.txt
#   ABCI=N    cuproof ab of the build against itself over the ci profile,
#             at most N pairs (at least 5)
#   WORK=1    10% more work per kernel in multi-kernel (--param
#             len=288512): compare on 3 runs a side
#   ABWORK=1  the same 10% by cuproof ab (build B a wrapper adding it)
#   CASES     the cases of CI and ABCI (default: the whole profile)
#   GPU=5 ci/device-issue28.sh; CI="1 2 3" ...; CI="4 5" PAIRS=1 ...
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
cases=${CASES:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
bin=./build/default/cuproof
keep=build/i28
mkdir -p "$keep"

export CUPROOF_REQUIRE_GPU=1
for i in $(seq 1 "${GPU:-0}"); do
    start=$(date +%s)
    ctest --test-dir build/default -L gpu --output-on-failure > "$out/ctest-gpu-$i.log" 2>&1
    rc=$?
    echo "ctest -L gpu run $i: rc $rc, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    grep -E "tests passed|Failed|\(Skipped\)|Not Run" "$out/ctest-gpu-$i.log" | head -12
    cp build/default/tests/exec/exec-out/overlap_regression/compare-less.log \
        "$out/overlap-regression-$i.log" 2>/dev/null
    grep -h "^base1:\|^alone1:" build/default/tests/exec/exec-out/overlap_regression/*.log \
        2>/dev/null | head -2
done
if [ -n "${TESTS:-}" ]; then
    ctest --test-dir build/default -R "$TESTS" --output-on-failure > "$out/tests.log" 2>&1
    echo "ctest -R $TESTS: rc $?" | tee -a "$out/summary.txt"
    grep -E "tests passed|Passed|Failed" "$out/tests.log" | head -12
    cp -r build/default/tests/exec/exec-out/overlap_regression "$out/" 2>/dev/null
fi
unset CUPROOF_REQUIRE_GPU

for r in ${CI:-}; do
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin run --profile ci --runs 3 --out "$keep/ci-$r" $cases > "$keep/ci-$r.log" 2>&1
    echo "run --profile ci --runs 3 ($r): exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    rm -f "$keep/ci-$r"/*.trace.json "$keep/ci-$r"/*.perfetto.json "$keep/ci-$r"/*.perfetto-trace
    tail -3 "$keep/ci-$r.log"
done

if [ "${PAIRS:-0}" = 1 ]; then
    runs=$(cd "$keep" && ls -d ci-? 2>/dev/null)
    for a in $runs; do
        for b in $runs; do
            [ "$a" = "$b" ] && continue
            $bin compare "$keep/$a" "$keep/$b" > "$keep/compare-$a-$b.log" 2>&1
            echo "rc=$?" >> "$keep/compare-$a-$b.log"
            $bin compare "$keep/$a" "$keep/$b" --format json > "$keep/compare-$a-$b.json" 2>/dev/null
        done
    done
    python3 ci/compare-summary.py "$keep" | tee "$out/pairs.txt"
fi

if [ "${ABCI:-0}" -gt 0 ]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin ab "$bin" "$bin" $cases --pairs "$ABCI" --min-pairs 5 --seed 5 --out "$out/ab-ci" \
        > "$out/ab-ci.log" 2>&1
    echo "ab self over the ci profile: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    tail -8 "$out/ab-ci.log"
    grep -c " slower" "$out/ab-ci.log"
    find "$out/ab-ci" -name '*.json.gz' -o -name '*.trace.json' -o -name '*.perfetto*' | xargs rm -f
fi

# WORK=1: 10% more work per kernel in multi-kernel (--param len=288512,
# 10.06% more), caught by compare on 3 runs a side and by ab, whose build B
# is this cuproof with the parameter added (a wrapper script).
if [ "${WORK:-0}" = 1 ]; then
    $bin run --runs 3 --out "$out/work-base" multi-kernel > "$out/work-base.log" 2>&1
    $bin run --runs 3 --out "$out/work-big" multi-kernel --param len=288512 \
        > "$out/work-big.log" 2>&1
    $bin compare "$out/work-base" "$out/work-big" > "$out/compare-work.log" 2>&1
    echo "compare base big (3 runs a side): exit $?" | tee -a "$out/summary.txt"
    cat "$out/compare-work.log"
    rm -f "$out"/work-*/*.trace.json "$out"/work-*/*.perfetto*
fi
if [ "${ABWORK:-0}" = 1 ]; then
    printf '#!/bin/sh\nexec %s "$@" --param len=288512\n' "$(realpath $bin)" > "$out/cuproof-big"
    chmod +x "$out/cuproof-big"
    $bin ab "$bin" "$out/cuproof-big" multi-kernel --pairs 8 --min-pairs 5 --seed 11 \
        --out "$out/ab-work" > "$out/ab-work.log" 2>&1
    echo "ab base big: exit $?" | tee -a "$out/summary.txt"
    tail -10 "$out/ab-work.log"
    rm -rf "$out/ab-work"/p*
fi
# The kept runs travel back too (reports and logs).
tar -czf "$out/i28.tar.gz" --exclude=passes -C build i28 2>/dev/null
device_pack
