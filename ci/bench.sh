#!/usr/bin/env bash
# Benchmarks that need no GPU, results in bench-out/analysis.json: the
# timeline analysis and the trace writer on 250k, 500k and 1M synthetic
# records (issue budget: 1M analysed and written in under 1 s on a 2-core
# machine, memory linear in the records).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --preset default >/dev/null
cmake --build --preset default --target analysis_bench
mkdir -p bench-out
for n in 250000 500000 1000000; do
    ./build/default/analysis_bench "$n" "bench-out/analysis-$n.json"
done
