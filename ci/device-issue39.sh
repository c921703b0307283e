#!/usr/bin/env bash
# Issue 39 (the tidy step) on one GPU: behaviour unchanged after the code
# moved rooms. One build, then (logs in $OUT/results.tar.gz):
#   - ctest -L gpu once, CUPROOF_REQUIRE_GPU=1 (ctest-gpu.log);
#   - examples/my-cases against an install of this build, its case passing
#     on the GPU (example.log);
#   - run --runs 2 --processes 2 over three short cases, the pass and
#     process policy that moved to reports/passes.c (passes.log, and the
#     report's processes_ms kept in passes-report.json);
#   - exec of a test program with an expectation (exec.log).
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/nvidia-smi.txt" 2>&1
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; device_pack; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
bin=./build/default/cuproof

start=$(date +%s)
CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -L gpu --output-on-failure > "$out/ctest-gpu.log" 2>&1
echo "ctest -L gpu: rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
grep -E "tests passed|Failed|\(Skipped\)|Not Run" "$out/ctest-gpu.log" | head -14 | tee -a "$out/summary.txt"

CUPROOF_REQUIRE_GPU=1 bash ci/example.sh build/default install > "$out/example.log" 2>&1
echo "example install: rc $?" | tee -a "$out/summary.txt"
tail -3 "$out/example.log"

start=$(date +%s)
$bin run --profile ci --runs 2 --processes 2 vector-add multi-kernel-events conway-global \
    --out build/passes > "$out/passes.log" 2>&1
echo "run --runs 2 --processes 2: rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
grep -E "^cuproof: pass|cases:" "$out/passes.log" | tee -a "$out/summary.txt"
cp build/passes/report.json "$out/passes-report.json" 2>/dev/null
grep -c '"processes_ms"' "$out/passes-report.json" 2>/dev/null | sed 's/^/variants with processes_ms: /' |
    tee -a "$out/summary.txt"

prog=$(find build/default/tests/exec -maxdepth 1 -name streams_overlap -type f | head -1)
$bin exec --out build/exec --expect 'peak_concurrent_kernels >= 1' -- "$prog" > "$out/exec.log" 2>&1
echo "exec $prog: rc $?" | tee -a "$out/summary.txt"
tail -4 "$out/exec.log"
device_pack
