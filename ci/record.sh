#!/usr/bin/env bash
# Records the ci profile on a GPU machine for `cuproof replay`: every case
# run with its traces, then report.json and the CASE.trace.json files packed
# as samples/recordings/<name>.tar.gz (deterministic order and times, so an
# unchanged recording packs to the same bytes).
#
#   ci/record.sh [NAME]      (default h100-ci; a built build/default is needed)
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-h100-ci}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A failed or inconclusive case is recorded as it is: the replay holds to it.
./build/default/cuproof run --profile ci --out "$dir" || echo "ci/record.sh: run exited $?"
date=$(sed -n 's/^[[:space:]]*"date":[[:space:]]*"\(.*\)",$/\1/p' "$dir/report.json" | head -1)
(cd "$dir" && tar -czf - --sort=name --owner=0 --group=0 --numeric-owner --mtime="$date" \
    report.json *.trace.json) > "samples/recordings/$name.tar.gz"
echo "ci/record.sh: samples/recordings/$name.tar.gz ($(du -h "samples/recordings/$name.tar.gz" | cut -f1))"
