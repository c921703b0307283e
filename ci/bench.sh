#!/usr/bin/env bash
# Benchmarks that need no GPU, results in bench-out/: the timeline
# analysis and the trace writer on 250k, 500k and 1M synthetic records
# (issue budget: 1M analysed and written in under 1 s on a 2-core machine,
# memory linear in the records), analysis-N.json; and the size and write
# time of 1M device records exported as a Chrome trace and as Perfetto's
# protobuf, alone and with the API calls that launched them,
# trace-size.json and trace-size-launches.json; and the streaming path on
# 1M, 3M and 10M records, stream-N.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset default >/dev/null
cmake --build --preset default --target analysis_bench trace_size_bench
mkdir -p bench-out
for n in 250000 500000 1000000; do
    ./build/default/analysis_bench "$n" "bench-out/analysis-$n.json"
done
./build/default/trace_size_bench 1000000 bench-out/trace-size.json
./build/default/trace_size_bench 1000000 bench-out/trace-size-launches.json --launches
# The streaming path (issue 20's goal: 10M records analysed with every
# metric and finding in under 3 s, peak RSS under 1 GB, linear): synthetic
# traces of 1M, 3M and 10M records written as cuproof.rec files, each
# analysed in a fresh process; bench-out/stream-N.json holds the figures.
cmake --build --preset default --target stream_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 1000000 3000000 10000000; do
    ./build/default/stream_bench gen "$n" "$tmp/s.cprec" > /dev/null
    ./build/default/stream_bench analyse "$tmp/s.cprec" "bench-out/stream-$n.json"
done
rm -f "$tmp/s.cprec"
