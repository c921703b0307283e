#!/usr/bin/env bash
# Issue 9's GPU figures, in stages that each fit one device call (ten
# minutes); results are packed into $OUT/results.tar.gz after each step.
#
#   ci/device-reliability.sh suite      build, ctest -L gpu (timed), the ci
#                                       profile of every case (timed), the
#                                       tracing overhead benchmark
#   ci/device-reliability.sh sanitize TOOL...   compute-sanitizer tools
#   ci/device-reliability.sh nsys       the harness under nsys profile
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
res=/tmp/cuproof-reliability
mkdir -p "$res"
cd "$root"
# shellcheck source=ci/common.sh
source ci/common.sh
[ -f .gpu-deps/env.sh ] && source .gpu-deps/env.sh
stage=${1:-suite}
shift || true
case "$stage" in
suite)
    CUPROOF_GPU_STAGE=tests ci/gpu.sh "$res/suite" > "$res/suite.log" 2>&1
    echo "gpu.sh exit: $?" >> "$res/suite.log"
    cuproof_pack "$res"
    start=$(date +%s%N)
    ./build/default/cuproof run --profile ci --out "$res/ci" > "$res/ci.log" 2>&1
    echo "ci exit: $?, wall $((($(date +%s%N) - start) / 1000000)) ms" >> "$res/ci.log"
    cuproof_pack "$res"
    ci/bench/overhead.sh "$res/overhead" > "$res/overhead.log" 2>&1
    echo "overhead exit: $?" >> "$res/overhead.log"
    cuproof_pack "$res"
    grep -h "wall\|tests passed\|exit\|Failed\|\*\*\*" "$res/suite.log" "$res/suite/ctest-gpu.log"
    tail -3 "$res/ci.log"; cat "$res/overhead.log"
    ;;
sanitize)
    CUPROOF_SANITIZE_TOOLS="$*" CUPROOF_SANITIZE_TIMEOUT=${CUPROOF_SANITIZE_TIMEOUT:-420} \
        ci/sanitize-gpu.sh "$res/sanitize-${1:-all}" 2>&1 | tee "$res/sanitize-${1:-all}.log"
    cuproof_pack "$res"
    ;;
nsys)
    nsys=$(cuproof_nsys)
    if [ -n "$nsys" ]; then
        timeout 300 "$nsys" profile --trace=cuda,nvtx -o "$res/nsys-run" --force-overwrite true \
            ./build/default/cuproof run vector-add multi-kernel context-sync --out "$res/under-nsys" \
            > "$res/nsys.log" 2>&1
        echo "nsys exit: $?" >> "$res/nsys.log"
        rm -f "$res"/*.qdstrm "$res"/*.nsys-rep
        tail -12 "$res/nsys.log"
    else
        echo "no nsys on this machine"
    fi
    cuproof_pack "$res"
    ;;
*)
    echo "device-reliability: unknown stage '$stage'" >&2
    exit 2
    ;;
esac
