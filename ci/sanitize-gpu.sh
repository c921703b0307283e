#!/usr/bin/env bash
# Every GPU case (ci profile, one untraced run per variant: CUPTI and the
# sanitizer both instrument the process) under each of compute-sanitizer's
# tools: memcheck (with leak checking), racecheck, synccheck and initcheck,
# following child processes (host-processes). Each (tool, case) pair is
# its own process, JOBS of them at once, so the GPU is shared:
# CUPROOF_SHARED_GPU=1 skips the checks that read device-wide free memory
# (they would measure the other processes; memcheck's leak check covers
# leaks). The slowest pairs start first. Logs go to OUT_DIR/TOOL/CASE.log,
# the counts to OUT_DIR/sanitize.json. The script fails when a tool reports
# an error or a run does not finish; a case that fails under a tool (a
# timing premise the tool's slowdown breaks) is listed with its reason.
#
# Two cases meet the tools' own behaviour, and say so rather than fail:
# under memcheck the child host-processes forks after CUDA initialisation
# hangs in cudaMalloc (its pipe is read with a time limit, the child is
# killed after 20 s and counted as unable to use CUDA); under initcheck
# launches block, so conway-streams' host queues for longer than its gate's
# timeout and the checks that rest on queued work are skipped with that
# reason: the case is inconclusive (exit 3), counted and listed with the
# reason, never passed. On the H100 all 84 pairs finished with 0 errors in
# 221 s.
#
#   ci/sanitize-gpu.sh [OUT_DIR]     (a built build/default is needed)
#
# CUPROOF_SANITIZE_TOOLS picks tools (default all four) and
# CUPROOF_SANITIZE_PAIRS single pairs ("tool:case ..."),
# CUPROOF_SANITIZE_JOBS the processes at once (default 8) and
# CUPROOF_SANITIZE_TIMEOUT each process's limit (seconds, default 480).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/gpu-out/sanitize}" && cd "${1:-$root/gpu-out/sanitize}" && pwd)
cd "$root"
tools=${CUPROOF_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
export CUPROOF_SHARED_GPU=1
export out budget=${CUPROOF_SANITIZE_TIMEOUT:-480}
# The slowest under the sanitizers first, so that they are not left last.
slow="conway-shared conway-block-sync host-processes host-threads conway-streams multi-kernel"
cases="$slow $(./build/default/cuproof list | awk '{print $1}' | grep -vxF -f <(tr ' ' '\n' <<< "$slow"))"

one() { # tool case
    local tool=$1 name=$2 extra=() rc
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    mkdir -p "$out/$tool"
    timeout "$budget" compute-sanitizer --tool "$tool" "${extra[@]}" --target-processes all \
        --error-exitcode 9 ./build/default/cuproof run "$name" --profile ci --no-trace \
        --repeat 1 --warmup 0 --out "$out/$tool/$name" > "$out/$tool/$name.log" 2>&1
    rc=$?
    echo "$rc" > "$out/$tool/$name.status"
}
export -f one
# The (tool, case) pairs: every case under every tool, slow cases first, or
# the pairs named in CUPROOF_SANITIZE_PAIRS ("memcheck:host-processes ...").
if [ -n "${CUPROOF_SANITIZE_PAIRS:-}" ]; then
    pairs=$(tr ' ' '\n' <<< "$CUPROOF_SANITIZE_PAIRS" | tr ':' ' ')
else
    pairs=$(for name in $cases; do for tool in $tools; do echo "$tool $name"; done; done)
fi
start=$(date +%s)
xargs -P "${CUPROOF_SANITIZE_JOBS:-8}" -L 1 bash -c 'one "$0" "$1"' <<< "$pairs"
echo "sanitize-gpu: all runs done in $(($(date +%s) - start)) s"

status=0
json="{"
for tool in $(awk '{print $1}' <<< "$pairs" | sort -u); do
    errors=0 processes=0 passed=0 failed=0 inconclusive=0 skipped=0 unfinished=0
    for name in $(awk -v t="$tool" '$1 == t {print $2}' <<< "$pairs"); do
        log="$out/$tool/$name.log"
        rc=$(cat "$out/$tool/$name.status")
        # One summary per process (the parent and each child); racecheck
        # words its own summary differently.
        e=$(grep -ho 'ERROR SUMMARY: [0-9]*\|(\([0-9]*\) errors' "$log" | grep -o '[0-9]*' |
            awk '{s += $1} END {print s + 0}')
        p=$(grep -c 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log")
        errors=$((errors + e))
        processes=$((processes + p))
        if grep -q "^\[1/1\] passed" "$log"; then passed=$((passed + 1))
        elif grep -q "^\[1/1\] skipped" "$log"; then skipped=$((skipped + 1))
        elif grep -q "^\[1/1\] inconclusive" "$log"; then inconclusive=$((inconclusive + 1))
            echo "sanitize-gpu: $tool: $name is inconclusive under the tool:"
            grep -A3 "^\[1/1\] inconclusive" "$log"
        elif grep -q "^\[1/1\] failed" "$log"; then failed=$((failed + 1))
            echo "sanitize-gpu: $tool: $name failed under the tool:"; grep -A3 "^\[1/1\] failed" "$log"
        else unfinished=$((unfinished + 1)); echo "sanitize-gpu: $tool: $name did not finish (exit $rc)"
        fi
        # Exit 1 (failed) and 3 (inconclusive) are the case's verdict under
        # the tool's slowdown; anything else is the tool or the run.
        if [ "$e" -ne 0 ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 3 ]; }; then
            echo "sanitize-gpu: $tool: $name: $e errors, exit $rc"
            status=1
        fi
    done
    [ "$unfinished" -eq 0 ] || status=1
    echo "sanitize-gpu: $tool: $errors errors in $processes processes; cases $passed passed, $failed failed, $inconclusive inconclusive, $skipped skipped, $unfinished unfinished"
    json="$json\"$tool\":{\"errors\":$errors,\"processes\":$processes,\"passed\":$passed,\"failed\":$failed,\"inconclusive\":$inconclusive,\"skipped\":$skipped,\"unfinished\":$unfinished},"
done
echo "${json%,}}" > "$out/sanitize.json"
exit $status
