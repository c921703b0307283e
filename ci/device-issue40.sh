#!/usr/bin/env bash
# Issue 40 (a regression gate on the GPU's time) on one GPU, each step
# chosen by a variable; logs and reports in $OUT/results.tar.gz:
#   PROGRESS=1  run --profile ci --runs 3 once, each output line stamped
#               with the seconds since the start (progress.log), the
#               longest silence between lines and the wall time in
#               summary.txt; its report.json kept (ci-runs3.json): the
#               passes' wall medians and traced device times, the
#               baseline for the GPU-time figure
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; device_pack; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
bin=./build/default/cuproof

if [ "${PROGRESS:-0}" = 1 ]; then
    t0=$EPOCHREALTIME
    $bin run --profile ci --runs 3 --out build/ci-runs3 2>&1 |
        while IFS= read -r line; do
            awk -v a="$EPOCHREALTIME" -v b="$t0" -v l="$line" 'BEGIN { printf "%.1f %s\n", a - b, l }'
        done > "$out/progress.log"
    rc=${PIPESTATUS[0]}
    echo "run --profile ci --runs 3: rc $rc, $(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { printf "%.0f", a - b }') s" |
        tee -a "$out/summary.txt"
    awk '{ if (NR > 1 && $1 - last > gap) { gap = $1 - last; at = $0 } last = $1 }
         END { printf "longest silence: %.1f s, before: %s\n", gap, at }' "$out/progress.log" |
        tee -a "$out/summary.txt"
    tail -3 "$out/progress.log" | tee -a "$out/summary.txt"
    cp build/ci-runs3/report.json "$out/ci-runs3.json"
fi
device_pack
