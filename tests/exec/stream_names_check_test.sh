#!/usr/bin/env bash
# exec_check.stream_names_check_can_fail: the check of
# exec.nvtx_ranges.stream_names (stream_names_check.py) on files cuproof
# makes here, without a GPU, from a trace file written as exec writes
# nvtx_ranges' (one process; add_one 3 times on stream 20, 2 times on
# stream 7; fma_chain on streams 21 and 22): it passes where stream 20
# carries the name, and fails where the name is missing, names another
# stream (one of fma_chain's, or stream 20 of another device), or where
# a second stream carries it too. The files are made by cuproof export
# (the Chrome trace) and cuproof timeline (the page, as report.html draws
# it), so that the check reads what cuproof writes.
# Skipped (77) without python3.
#   stream_names_check_test.sh CUPROOF OUT_DIR
set -uo pipefail
cuproof=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 > /dev/null || { echo "stream_names_check_test: skipped: no python3"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || exit 1
name='named <&> "1"'

# One case: TRACE's stream_names array ($1) written, exported, drawn and
# checked; prints the check's verdict, returns its status.
check() {
    local dir="$out/$2"
    mkdir -p "$dir"
    local kernels="" start=0
    for s in 20 20 20 7 7; do
        kernels+="{\"kind\":\"kernel\",\"start\":$start,\"end\":$((start + 5)),\"device\":0,\"context\":1,\"stream\":$s,\"correlation\":1,\"name\":\"_Z7add_onePii\"},"
        start=$((start + 10))
    done
    for s in 21 22; do
        kernels+="{\"kind\":\"kernel\",\"start\":$start,\"end\":$((start + 5)),\"device\":0,\"context\":1,\"stream\":$s,\"correlation\":1,\"name\":\"_Z9fma_chainPfmi\"},"
    done
    printf '{"schema":"cuproof.trace/1","case":"nvtx_ranges","device":"none","variants":[{"name":"program","dropped_records":0,"processes":[{"pid":4242,"ppid":1,"host":"h","command":"nvtx_ranges","ended":true,"last_ns":"100","dropped":0,"zero_timestamps":0}]%s,"series":[],"origin_ns":"1000","activities":[%s]}]}\n' \
        "$1" "${kernels%,}" > "$dir/nvtx_ranges.trace.json"
    "$cuproof" export "$dir/nvtx_ranges.trace.json" "$dir" --format json > /dev/null || return 9
    "$cuproof" timeline "$dir/report.html" "$dir/nvtx_ranges.trace.json" > /dev/null || return 9
    python3 "$here/stream_names_check.py" "$dir/nvtx_ranges.trace.json" \
        "$dir/nvtx_ranges.program.perfetto.json" "$dir/report.html" "$name" add_one 3 2
}

entry() { # process device context stream
    printf '{"process":%s,"device":%s,"context":%s,"stream":%s,"name":"named <&> \\"1\\""}' "$@"
}

bad=0
check ",\"stream_names\":[$(entry 0 0 1 20)]" named ||
    { echo "stream_names_check_test: the check failed where stream 20 carries the name"; bad=1; }
for case in none fma other-device twice; do
    case $case in
    none) names="" ;;
    fma) names=",\"stream_names\":[$(entry 0 0 1 21)]" ;;
    other-device) names=",\"stream_names\":[$(entry 0 1 1 20)]" ;;
    twice) names=",\"stream_names\":[$(entry 0 0 1 20),$(entry 0 0 1 7)]" ;;
    esac
    check "$names" "$case"
    rc=$?
    if [ "$rc" != 1 ]; then
        echo "stream_names_check_test: $case: the check exited $rc, 1 wanted"
        bad=1
    fi
done
exit $bad
