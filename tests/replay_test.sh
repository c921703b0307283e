#!/usr/bin/env bash
# The recording of an H100 run replayed here, with no GPU: every verdict as
# recorded, every recomputed metric equal to the recorded one (replay exits
# 1 otherwise), and the report labelled as a replay. Then the negative
# controls: a recorded metric changed by one, and a recorded verdict
# changed, must each make the replay say so and fail.
#
#   tests/replay_test.sh CUPROOF RECORDING.tar.gz WORK_DIR
set -euo pipefail
cuproof=$1 recording=$2 work=$3
rm -rf "$work"
mkdir -p "$work/rec"
tar -xzf "$recording" -C "$work/rec"
fail=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "replay_test: ok: $what"; else echo "replay_test: FAILED: $what"; fail=1; fi
}

start=$(date +%s%N)
"$cuproof" replay "$work/rec" --out "$work/out" > "$work/replay.log" 2>&1 && rc=0 || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat "$work/replay.log"
echo "replay_test: the replay took $ms ms"
check "the replay exits 0 (the recording's cases passed or were skipped)" test "$rc" -eq 0
check "every verdict as recorded" grep -q "21 of 21 verdicts as recorded" "$work/replay.log"
check "no disagreement" bash -c "! grep -q 'disagrees with the recording' '$work/replay.log'"
# The verdicts of the cases, in order, from both report.json files (a
# case's status is the first after its name and title).
verdicts() {
    awk '/^\t\t\t"name":/ {name = $2} /^\t\t\t"status":/ {print name, $2}' "$1"
}
check "the cases' verdicts are the recording's" test "$(verdicts "$work/rec/report.json")" = \
    "$(verdicts "$work/out/report.json")"
check "21 cases compared" test "$(verdicts "$work/out/report.json" | wc -l)" -eq 21
check "report.json says it is a replay" grep -q '"replay":' "$work/out/report.json"
check "report.html says it is a replay" grep -q 'Replayed from a recording on NVIDIA H100 80GB HBM3' "$work/out/report.html"
# No GPU is here: a case's line names the one it was recorded on, never
# "GPU 0" as if it ran on this machine.
check "each case names the GPU it was recorded on" grep -q '^\[1/21\] passed  broadcast  *recorded on GPU 0' "$work/replay.log"
check "no case line names a GPU as if it were here" bash -c "! grep -E '^\[[0-9]+/[0-9]+\] .* GPU [0-9]' '$work/replay.log' | grep -vq 'recorded on GPU'"

# Negative control 1: a recorded metric that the trace does not give.
mkdir -p "$work/bad1"
cp "$work/rec/"*.json "$work/bad1/"
sed -i '0,/"peak_concurrent_kernels":[[:space:]]*64,/s//"peak_concurrent_kernels": 65,/' "$work/bad1/report.json"
check "the tampered recording differs" bash -c "! cmp -s '$work/rec/report.json' '$work/bad1/report.json'"
"$cuproof" replay "$work/bad1" --out "$work/out1" > "$work/bad1.log" 2>&1 && rc=0 || rc=$?
check "a changed metric fails the replay (exit 1)" test "$rc" -eq 1
check "and is named" grep -q 'peak_concurrent_kernels recorded 65, recomputed 64' "$work/bad1.log"

# Negative control 2: a verdict the recomputed checks do not give.
mkdir -p "$work/bad2"
cp "$work/rec/"*.json "$work/bad2/"
awk '/"name":[[:space:]]*"vector-add"/ {seen = 1}
     seen && /"status":/ {sub(/"passed"/, "\"failed\""); seen = 0} {print}' \
    "$work/rec/report.json" > "$work/bad2/report.json"
"$cuproof" replay "$work/bad2" --out "$work/out2" > "$work/bad2.log" 2>&1 && rc=0 || rc=$?
check "a changed verdict fails the replay (exit 1)" test "$rc" -eq 1
check "and is named" grep -q 'vector-add: verdict passed, recorded failed' "$work/bad2.log"
exit $fail
