#!/usr/bin/env bash
# The H100 check of issue 26's restructuring, in one device call: build,
# the GPU tests (cases, harness and every exec program through the
# library's launcher and judge), the exec tests again in the rec form,
# and with FULL=1 the full-profile sample report. Logs go to $OUT.
#   ci/device-issue26.sh            (on the device, from the repository root)
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.txt"
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
export CUPROOF_REQUIRE_GPU=1
if [ "${TESTS:-1}" = 1 ]; then
    start=$(date +%s)
    ctest --test-dir build/default -L gpu --output-on-failure > "$out/ctest-gpu.log" 2>&1
    echo "ctest -L gpu: rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/ctest-gpu.log"
    tail -4 "$out/ctest-gpu.log" | head -2
    CUPROOF_EXEC_FORMAT=rec ctest --test-dir build/default -L exec --output-on-failure \
        > "$out/ctest-exec-rec.log" 2>&1
    echo "ctest -L exec (rec): rc $?" | tee -a "$out/ctest-exec-rec.log"
    grep -E 'tests passed' "$out/ctest-exec-rec.log"
fi
if [ "${FULL:-0}" = 1 ]; then
    start=$(date +%s)
    ./build/default/cuproof run --profile full --max-time 2 --out "$out/full" > "$out/run-full.log" 2>&1
    echo "run --profile full --max-time 2: rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/run-full.log"
    tail -3 "$out/run-full.log"
fi
# The device tool brings back a few files only: everything in one archive
# (the report, the logs, every trace), listed beside it.
device_pack
