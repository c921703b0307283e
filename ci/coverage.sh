#!/usr/bin/env bash
# Builds with coverage, runs the CPU tests, and measures line coverage of
# harness/ and reports/ with gcovr: HTML and a text summary under
# build/coverage/coverage/, failing under 80%.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source ci/common.sh
cuproof_build coverage
find build/coverage -name '*.gcda' -delete
ctest --preset coverage -j "$(nproc)"
out=build/coverage/coverage
mkdir -p "$out"
gcovr --root "$root" --object-directory build/coverage \
    --filter 'harness/' --filter 'reports/' \
    --html-details "$out/index.html" --txt "$out/summary.txt" \
    --print-summary --fail-under-line 80
cat "$out/summary.txt"
