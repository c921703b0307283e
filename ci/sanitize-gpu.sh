#!/usr/bin/env bash
# Every GPU case (ci profile, one untraced run per variant: CUPTI and the
# sanitizer both instrument the process) under each of compute-sanitizer's
# tools: memcheck (with leak checking), racecheck, synccheck and
# initcheck, following child processes (host-processes). The four tools
# run side by side, each over every case in turn, so the GPU is shared:
# CUPROOF_SHARED_GPU=1 leaves out the device-wide free-memory checks, which
# would measure the other tools' processes (memcheck's leak check covers
# the leaks). Each tool's log goes to OUT_DIR/TOOL.log and the error counts
# to OUT_DIR/sanitize.json; the script fails when a tool reports an error,
# does not finish, or a case fails under it.
#
#   ci/sanitize-gpu.sh [OUT_DIR]     (a built build/default is needed)
#
# CUPROOF_SANITIZE_TOOLS picks tools (default all four);
# CUPROOF_SANITIZE_TIMEOUT bounds each tool's run (seconds, default 480).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/gpu-out/sanitize}" && cd "${1:-$root/gpu-out/sanitize}" && pwd)
cd "$root"
budget=${CUPROOF_SANITIZE_TIMEOUT:-480}
tools=${CUPROOF_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
export CUPROOF_SHARED_GPU=1

sanitize() { # tool
    local tool=$1 extra=() start rc
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    start=$(date +%s)
    timeout "$budget" compute-sanitizer --tool "$tool" "${extra[@]}" --target-processes all \
        --error-exitcode 9 ./build/default/cuproof run --profile ci --no-trace --repeat 1 \
        --warmup 0 --out "$out/$tool" > "$out/$tool.log" 2>&1
    rc=$?
    echo "$rc $(($(date +%s) - start))" > "$out/$tool.status"
}
for tool in $tools; do
    sanitize "$tool" &
done
wait

status=0
json="{"
for tool in $tools; do
    read -r rc secs < "$out/$tool.status"
    # Each process (the parent and every child) prints its own summary.
    errors=$(grep -ho 'ERROR SUMMARY: [0-9]*' "$out/$tool.log" | awk '{s += $3} END {print s + 0}')
    summaries=$(grep -c 'ERROR SUMMARY' "$out/$tool.log")
    cases=$(grep -o '[0-9]* cases: [0-9]* passed, [0-9]* failed, [0-9]* skipped' "$out/$tool.log")
    echo "sanitize-gpu: $tool: exit $rc, $errors errors in $summaries processes, ${cases:-did not finish}, ${secs} s"
    grep 'check failed\|^\[.*failed' "$out/$tool.log" | head -5
    [ "$rc" -eq 0 ] && [ "$errors" -eq 0 ] || status=1
    json="$json\"$tool\":{\"exit\":$rc,\"errors\":$errors,\"processes\":$summaries,\"seconds\":$secs,\"cases\":\"${cases:-did not finish}\"},"
done
echo "${json%,}}" > "$out/sanitize.json"
exit $status
