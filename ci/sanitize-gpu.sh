#!/usr/bin/env bash
# Every GPU case (ci profile, one untimed and one timed run per variant,
# untraced: CUPTI and the sanitizer both instrument the process) under each
# of compute-sanitizer's tools: memcheck (with leak checking), racecheck,
# synccheck and initcheck. Child processes (host-processes) are followed.
# Each tool's log goes to OUT_DIR/TOOL.log and its error count to
# OUT_DIR/sanitize.json; the script fails when any tool reports an error or
# a case fails under it.
#
#   ci/sanitize-gpu.sh [OUT_DIR]     (a built build/default is needed)
#
# CUPROOF_SANITIZE_TOOLS picks tools (default all four);
# CUPROOF_SANITIZE_TIMEOUT bounds each tool's run (seconds, default 240).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/gpu-out/sanitize}" && cd "${1:-$root/gpu-out/sanitize}" && pwd)
cd "$root"
budget=${CUPROOF_SANITIZE_TIMEOUT:-240}
status=0
json="{"
for tool in ${CUPROOF_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    start=$(date +%s)
    timeout "$budget" compute-sanitizer --tool "$tool" "${extra[@]}" --target-processes all \
        --error-exitcode 9 ./build/default/cuproof run --profile ci --no-trace --repeat 1 \
        --warmup 1 --out "$out/$tool" > "$out/$tool.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    # Each process (the parent and every child) prints its own summary.
    errors=$(grep -ho 'ERROR SUMMARY: [0-9]*' "$out/$tool.log" | awk '{s += $3} END {print s + 0}')
    summaries=$(grep -c 'ERROR SUMMARY' "$out/$tool.log")
    cases=$(grep -o '[0-9]* cases: [0-9]* passed, [0-9]* failed, [0-9]* skipped' "$out/$tool.log")
    echo "sanitize-gpu: $tool: exit $rc, $errors errors in $summaries processes, $cases, ${secs} s"
    [ "$rc" -eq 0 ] && [ "$errors" -eq 0 ] || status=1
    json="$json\"$tool\":{\"exit\":$rc,\"errors\":$errors,\"processes\":$summaries,\"seconds\":$secs,\"cases\":\"$cases\"},"
done
echo "${json%,}}" > "$out/sanitize.json"
exit $status
