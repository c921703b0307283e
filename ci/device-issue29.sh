#!/usr/bin/env bash
# Issue 29 (and issue 28's noise) on one GPU, each step chosen by a
# variable (logs, traces and reports in $OUT/results.tar.gz):
#   GPU=1     ctest -L gpu once (the code changed since the last GPU run);
#             GPU_REPEAT=N N times in a row, counting from GPU_FIRST
#   FORMS=1   issue 30: the exec GPU tests again with every process writing
#             cuproof.rec (CUPROOF_EXEC_FORMAT=rec) and with every API call
#             recorded (CUPROOF_EXEC_API=all), beside GPU=1's default;
#             FORMS_LIST replaces those two settings with its own
#   OVERHEAD=1  issue 30: ci/bench/exec-overhead.sh (RUNS, BENCH_PROGRAMS,
#             BENCH_NSYS_PYTHON as it reads them) into $OUT/overhead: the
#             programs whose kernels are long, plain / exec / nsys
#   SEED=1    issue 30: ci/bench/seed-parts.sh into $OUT/seed (RUNS)
#   KEEP=1    issue 30: the PyTorch loop traced once, its proc/ kept
#             ($OUT/torch-proc.tar.gz), to profile post-processing on a CPU
#   RECORD=1  the findings' programs under cuproof exec, each trace kept:
#             torch_pageable.py (pageable, --pinned), graph_chain (graph,
#             events, independent, independent under CUDA_LAUNCH_BLOCKING=1)
#   NOISE=N   issue 28: the host-bound cases run N times, each invocation a
#             process, plain, without address-space randomisation
#             (setarch -R) and with glibc's malloc on transparent huge pages
#             (GLIBC_TUNABLES=glibc.malloc.hugetlb=1); the spread of their
#             medians between invocations, per variant (noise.txt)
#   LAYOUT=N  issue 28: run --runs 3 over the faster cases, N times with the
#             layout fixed and N with CUPROOF_ASLR=1, interleaved; reports
#             in build/lay (packed into $OUT at the end; compare them on CPU);
#             LAYOUT_CFGS picks among fixed, random, pinned
#             (CUPROOF_CPU_AFFINITY=gpu), rK (--runs K instead of 3;
#             ci/group-passes.py makes runs of several processes of them),
#             pP (--runs 3 --processes P)
#             and any other name, which runs
#             with LAYOUT_ARGS added (e.g. "--repeat 200")
#   CASES="A B"  those cases alone in the ci profile, timed (cases.log)
#   REPLAY=1  ci/record.sh: samples/recordings/h100-ci.tar.gz re-recorded
#   FULL=1    the full-profile sample (samples/h100-full): run --profile
#             full --max-time 2, report.json/html and two Perfetto traces
#   BENCH=1   issue 30: ci/bench/launch-bound.sh (RUNS, STEPS, PROGRAMS,
#             MODES as it reads them) into $OUT/bench
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
cat "$out/nvidia-smi.txt"
cat /sys/kernel/mm/transparent_hugepage/enabled > "$out/thp.txt" 2>&1
cat /proc/sys/kernel/randomize_va_space >> "$out/thp.txt" 2>&1
start=$(date +%s)
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
bin=./build/default/cuproof

if [ "${GPU:-0}" = 1 ]; then
    # GPU_REPEAT=N: N consecutive runs (issue 28: five on a freshly
    # started machine), ctest-gpu-K.log each; GPU_FIRST names the first K
    # (a later call on the same machine goes on counting).
    for k in $(seq "${GPU_FIRST:-1}" $(( ${GPU_FIRST:-1} + ${GPU_REPEAT:-1} - 1 ))); do
        start=$(date +%s)
        CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -L gpu --output-on-failure > "$out/ctest-gpu-$k.log" 2>&1
        echo "ctest -L gpu ($k): rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
        grep -E "tests passed|Failed|\(Skipped\)|Not Run" "$out/ctest-gpu-$k.log" | head -12
    done
fi

if [ "${FORMS:-0}" = 1 ]; then
    for form in ${FORMS_LIST:-CUPROOF_EXEC_FORMAT=rec CUPROOF_EXEC_API=all}; do
        start=$(date +%s)
        log="$out/ctest-exec-${form#CUPROOF_EXEC_}.log"
        env "$form" CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -L gpu -R '^exec\.' \
            --output-on-failure > "$log" 2>&1
        echo "ctest -L gpu -R exec ($form): rc $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
        grep -E "tests passed|Failed|\(Skipped\)" "$log" | head -8
    done
fi

record() { # NAME ENV... -- PROGRAM ARGS...
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" $bin exec --out "$out/rec/$name" -- "$@" > "$out/rec-$name.log" 2>&1
    echo "exec $name: exit $?" | tee -a "$out/summary.txt"
    rm -f "$out/rec/$name"/*.html
    grep -E "overlap|finding|serial|peak" "$out/rec-$name.log" | head -8
}
if [ "${RECORD:-0}" = 1 ]; then
    gc=build/default/tests/exec/graph_chain
    record torch-pageable X=1 -- python3 tests/exec/torch_pageable.py
    record torch-pinned X=1 -- python3 tests/exec/torch_pageable.py --pinned
    record graph-chain X=1 -- $gc graph
    record graph-chain-events X=1 -- $gc events
    record graph-independent X=1 -- $gc independent
    record graph-independent-blocking CUDA_LAUNCH_BLOCKING=1 -- $gc independent
    record pageable-twin X=1 -- build/default/tests/exec/pageable_twin
fi

if [ "${NOISE:-0}" -gt 0 ]; then
    cases=${NOISE_CASES:-rtc-unroll indexing custom-elementwise broadcast zero-copy-interop conway-global}
    mkdir -p "$out/noise"
    for i in $(seq 1 "$NOISE"); do  # interleaved, so that a trend in time hits every cfg
        for cfg in ${NOISE_CFGS:-plain norand hugetlb}; do
            d=$out/noise/$cfg-$i
            case $cfg in
                plain) $bin run --profile ci --out "$d" $cases > "$d.log" 2>&1 ;;
                norand) setarch "$(uname -m)" -R $bin run --profile ci --out "$d" $cases > "$d.log" 2>&1 ;;
                both) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 setarch "$(uname -m)" -R $bin run --profile ci --out "$d" $cases > "$d.log" 2>&1 ;;
                hugetlb) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $bin run --profile ci --out "$d" $cases > "$d.log" 2>&1 ;;
            esac
            rm -f "$d"/*.trace.json "$d"/*.perfetto* "$d"/*.html
        done
    done
    python3 - "$out/noise" > "$out/noise.txt" <<'PY'
import json, math, os, statistics as st, sys
root = sys.argv[1]
by = {}
for d in sorted(os.listdir(root)):
    p = os.path.join(root, d, "report.json")
    if not os.path.isfile(p):
        continue
    cfg = d.rsplit("-", 1)[0]
    for c in json.load(open(p))["cases"]:
        for v in c.get("variants") or []:
            t = v.get("timing") or {}
            if t.get("median_ms"):
                by.setdefault((c["name"] + "/" + v["name"], cfg), []).append(t["median_ms"])
names = sorted({k[0] for k in by})
cfgs = sorted({k[1] for k in by}, key=lambda c: ["plain", "norand", "hugetlb", "both"].index(c))
print(f"{'variant':40s} " + " ".join(f"{c:>22s}" for c in cfgs))
for n in names:
    row = []
    for cfg in cfgs:
        xs = by.get((n, cfg), [])
        if len(xs) < 2:
            row.append(f"{'-':>22s}")
            continue
        sd = st.stdev([math.log(x) for x in xs])
        row.append(f"{st.median(xs):9.4f} ms sd {100*sd:5.1f}%")
    print(f"{n:40s} " + " ".join(row))
PY
    cat "$out/noise.txt"
fi

if [ "${LAYOUT:-0}" -gt 0 ]; then
    lay=build/lay
    rm -rf "$lay" && mkdir -p "$lay"
    cases="broadcast custom-elementwise indexing rtc-unroll zero-copy-interop conway-global conway-streams elementwise-vs-handwritten mandelbrot grid-model"
    start=$(date +%s)
    for i in $(seq 1 "$LAYOUT"); do
        for cfg in ${LAYOUT_CFGS:-fixed random}; do
            [ $(( $(date +%s) - start )) -gt "${LAYOUT_BUDGET:-300}" ] && break 2
            # shellcheck disable=SC2086
            case $cfg in
                random) CUPROOF_ASLR=1 $bin run --profile ci --runs 3 --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
                fixed) $bin run --profile ci --runs 3 --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
                pinned) CUPROOF_CPU_AFFINITY=gpu $bin run --profile ci --runs 3 --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
                r[0-9]) $bin run --profile ci --runs "${cfg#r}" --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
                p[0-9]) $bin run --profile ci --runs 3 --processes "${cfg#p}" --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
                *) $bin run --profile ci --runs 3 ${LAYOUT_ARGS:-} --out "$lay/$cfg-$i" $cases > "$lay/$cfg-$i.log" 2>&1 ;;
            esac
            echo "layout $cfg-$i: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
            rm -f "$lay/$cfg-$i"/*.trace.json "$lay/$cfg-$i"/*.perfetto* "$lay/$cfg-$i"/*.html
        done
    done
    tar -czf "$out/layout.tar.gz" "$lay"
fi

# CIP=1: the whole ci profile as run --runs 3 (CIP_ARGS replaces that),
# timed, its report kept (cip.report.json)
if [ "${CIP:-0}" = 1 ]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin run --profile ci ${CIP_ARGS:---runs 3} --out build/cip > "$out/cip.log" 2>&1
    echo "ci ${CIP_ARGS:---runs 3}: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    cp build/cip/report.json "$out/cip.report.json"
fi

if [ -n "${CASES:-}" ]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    $bin run --profile ci --out build/cases $CASES > "$out/cases.log" 2>&1
    echo "cases $CASES: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    cp build/cases/report.json "$out/cases.report.json"
    tail -25 "$out/cases.log"
fi

if [ "${REPLAY:-0}" = 1 ]; then
    bash ci/record.sh > "$out/record.log" 2>&1
    echo "record: exit $?" | tee -a "$out/summary.txt"
    cp samples/recordings/h100-ci.tar.gz "$out/"
fi

if [ "${FULL:-0}" = 1 ]; then
    start=$(date +%s)
    $bin run --profile full --max-time 2 --out build/full > "$out/run-full.log" 2>&1
    echo "full: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    mkdir -p "$out/full"
    cp build/full/report.json build/full/report.html "$out/full/"
    cp build/full/multi-kernel.sync.perfetto.json build/full/multi-kernel.streams-pinned.perfetto.json "$out/full/" 2>/dev/null
    cp "$out/nvidia-smi.txt" "$out/full/"
    tail -30 "$out/run-full.log"
    # Streams by the names the cases gave them (issue 29), in each output.
    for f in build/full/multi-kernel.streams-pinned.perfetto.json build/full/report.html; do
        echo "$f: $(grep -o 'multi-kernel stream [0-9]* (stream [0-9]*)' "$f" | sort -u | wc -l) named lanes, e.g. $(grep -o 'multi-kernel stream [0-9]* (stream [0-9]*)' "$f" | head -1)"
    done | tee -a "$out/summary.txt"
fi

if [ "${BENCH:-0}" = 1 ]; then
    start=$(date +%s)
    bash ci/bench/launch-bound.sh "$out/bench" > "$out/bench.log" 2>&1
    echo "bench: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    cat "$out/bench/launch-bound.txt"
fi

if [ "${OVERHEAD:-0}" = 1 ]; then
    start=$(date +%s)
    bash ci/bench/exec-overhead.sh "$out/overhead" > "$out/overhead.log" 2>&1
    echo "exec-overhead: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    cat "$out/overhead/exec-overhead.txt"
fi

if [ "${SEED:-0}" = 1 ]; then
    bash ci/bench/seed-parts.sh "$out/seed" > "$out/seed.log" 2>&1
    echo "seed-parts: exit $?" | tee -a "$out/summary.txt"
fi

if [ "${KEEP:-0}" = 1 ]; then
    rm -rf build/keep
    "$bin" exec --out build/keep -- python3 ci/bench/torch_small_ops.py --steps 3000 > "$out/keep.log" 2>&1
    echo "kept torch trace: exit $?" | tee -a "$out/summary.txt"
    tar -czf "$out/torch-proc.tar.gz" -C build/keep proc
fi
device_pack
