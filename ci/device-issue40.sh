#!/usr/bin/env bash
# Issue 40 (a regression gate on the GPU's time) on one GPU, each step
# chosen by STEP (several, comma-separated), so that the device calls of
# one session share one build; logs and reports in $OUT/results.tar.gz:
#   build     configure and build (kept between calls on a warm machine)
#   smoke     the harness's GPU tests (test_gpu: the gate, events) and a
#             `run --runs 1` of the gated cases, with ci/gpu-figure.py's
#             table of GPU time against the traced span
#   gputests  tests/gpu_figure_test.sh (each variant's judged figure
#             against CUPTI's account of the same timed runs: its table in
#             figure-check.txt), then every other GPU test but the cases'
#             (run1..3 run every case): `ctest -L gpu -E '^case\.'`
#   figure    `run` of every case with CUPROOF_CHECK_GPU_TIME=1 (each
#             timed run traced too): figure.json and ci/gpu-figure.py's
#             table of each variant's GPU time against CUPTI's span of the
#             same runs (figure.txt)
#   run1, run2, run3
#             `run --profile ci --runs 3`, back to back, each output line
#             stamped with the seconds since its start (runN.log), reports
#             runN.json
#   param     multi-kernel --runs 3 twice: as it is and with 5% more work
#             (--param len), param0.json and param5.json
#   hb3       host-threads --runs 3 with 3x the work of a thread (hb3.json)
#   hostbound host-threads (judged on wall time) --runs 3 with 5% and four
#             times the work of each thread (--param len): hb5pct.json and
#             hbx4.json, compared afterwards against run1.json
#   ab        `ab` of the build against itself over conway-streams,
#             multi-kernel and broadcast (--max-time AB_TIME, default 240)
#   abparam   `ab` of the build against itself with 5% more work in
#             multi-kernel (a wrapper that adds --param len; --max-time
#             AB5_TIME, default 150)
#   figure2   tests/gpu_figure_test.sh once more (figure-check-2.txt):
#             with gputests first, the first and a later GPU use of a
#             fresh machine side by side
#   centre    CUPROOF_CHECK_GPU_TIME=1 run indexing --repeat 15 in 8
#             processes (centre-N.*): the runner's listing of a traced run
#             whose own busy time is off the timed runs'
#   centre2   the figure check's command twice, its listings kept, and
#             vector-add then indexing alone (centre2-*)
#   topo      the machine's CPUs, NUMA nodes and the GPU's place among
#             them (topo.txt)
#   queued    conway-streams --runs 3 --processes 5, as it is and pinned to
#             the GPU's CPUs (CUPROOF_CPU_AFFINITY=gpu): queued-all.json
#             and queued-gpu.json, 15 processes' GPU time each
#   levels    ci/bench/queued_levels.cu (built with nvcc) in LEVEL_PROCS fresh
#             processes (default 6) for each of its modes (none, streams,
#             device, host, all; or LEVEL_MODES), 4 rounds of 11 samples,
#             then mode none under CUDA_DEVICE_MAX_CONNECTIONS=1 and 32 (or
#             LEVEL_CONNS): levels.txt, one line a process, round and
#             figure; NO_BUILD=1 skips the build that a machine without
#             cuproof's binary would otherwise make
#   procs     conway-streams --runs 10, each pass in one process and in 3 (or PROCS)
#             (--processes 3; a pass's GPU value the mean of its
#             processes'): procs1.json and procs3.json, the queued
#             variants' spread between passes
#   mainexec  issue 41: the main job's build (preset main) of a copy of the
#             tree without build/, and its binary's `exec` of
#             tests/exec/cupy_streams.py with its expectations
#             (mainexec.log); install-deps is not run (no network there:
#             the libraries come from .gpu-deps)
#   gpufull   every GPU test, the cases' too: `ctest -L gpu`
#   PROGRESS=1 (the step of before): one run --runs 3 with its progress
# The comparisons of the recorded reports run on the CPU afterwards
# (ci/gpu-figure.py, cuproof compare): GPU time is scarce.
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$out/nvidia-smi.txt" 2>&1
bin=./build/default/cuproof
steps=",${STEP:-build,smoke},"
has() { [[ $steps == *",$1,"* ]]; }

# The run's output, each line stamped with the seconds since `t0`.
stamped() {
    local t0=$EPOCHREALTIME
    while IFS= read -r line; do
        awk -v a="$EPOCHREALTIME" -v b="$t0" -v l="$line" 'BEGIN { printf "%.1f %s\n", a - b, l }'
    done
}

# run --profile ci --runs 3 into build/NAME, its stamped log and report.
runs3() {
    local name=$1 t0=$EPOCHREALTIME
    $bin run --profile ci --runs 3 --out "build/$name" 2>&1 | stamped > "$out/$name.log"
    local rc=${PIPESTATUS[0]}
    echo "$name: run --profile ci --runs 3: rc $rc, $(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { printf "%.0f", a - b }') s" |
        tee -a "$out/summary.txt"
    awk -v n="$name" '{ if (NR > 1 && $1 - last > gap) { gap = $1 - last; at = $0 } last = $1 }
         END { printf "%s: longest silence %.1f s, before: %s\n", n, gap, at }' "$out/$name.log" |
        tee -a "$out/summary.txt"
    cp "build/$name/report.json" "$out/$name.json"
}

if has build || { [ ! -x "$bin" ] && [ "${NO_BUILD:-0}" != 1 ]; }; then
    device_build
fi

if has smoke; then
    CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -R '^gpu\.' --output-on-failure \
        > "$out/test-gpu.log" 2>&1
    echo "test_gpu: rc $?; $(grep -E 'tests passed|tests failed' "$out/test-gpu.log")" | tee -a "$out/summary.txt"
    grep -h "GPU time ungated" -r build/default/Testing 2>/dev/null | head -3 >> "$out/summary.txt"
    ./build/default/tests/test_gpu --filter 'gpu/the_gate*' --verbose > "$out/test-gate.log" 2>&1
    $bin run conway-streams multi-kernel conway-global broadcast vector-add --out build/smoke \
        > "$out/smoke.log" 2>&1
    echo "smoke run: rc $?" | tee -a "$out/summary.txt"
    cp build/smoke/report.json "$out/smoke.json"
    python3 ci/gpu-figure.py build/smoke/report.json > "$out/smoke-figure.txt" 2>&1
    tail -4 "$out/smoke-figure.txt" | tee -a "$out/summary.txt"
fi

if has gputests; then
    t0=$(date +%s)
    bash tests/gpu_figure_test.sh . "$bin" > "$out/figure-check.txt" 2>&1
    echo "figure check: rc $?, $(( $(date +%s) - t0 )) s; $(tail -1 "$out/figure-check.txt")" |
        tee -a "$out/summary.txt"
    t0=$(date +%s)
    CUPROOF_REQUIRE_GPU=1 timeout "${GPUTESTS_TIME:-300}" ctest --test-dir build/default -L gpu \
        -E '^case\.|the_judged_figure' --output-on-failure > "$out/ctest-gpu.log" 2>&1
    echo "ctest -L gpu (not the cases): rc $?, $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log")" |
        tee -a "$out/summary.txt"
fi

if has figure2; then
    t0=$(date +%s)
    bash tests/gpu_figure_test.sh . "$bin" > "$out/figure-check-2.txt" 2>&1
    echo "figure check again: rc $?, $(( $(date +%s) - t0 )) s; $(tail -1 "$out/figure-check-2.txt")" |
        tee -a "$out/summary.txt"
    [ -f gpu-figure-failed-report.json ] && gzip -c gpu-figure-failed-report.json > "$out/figure-check-2.json.gz"
fi

if has centre; then
    # indexing with every timed run traced, in 8 processes: where the one
    # traced run's own busy time is off the timed runs' (indexing centre,
    # 5.5-6.6% in 3 of 4 checks), the runner lists both runs on stderr.
    for i in 1 2 3 4 5 6 7 8; do
        CUPROOF_CHECK_GPU_TIME=1 $bin run indexing --repeat 15 --out "build/centre-$i" \
            > "$out/centre-$i.log" 2>&1
        python3 ci/gpu-figure.py "build/centre-$i/report.json" > "$out/centre-$i.txt" 2>&1
        echo "centre $i: rc $?; $(grep -E '^indexing +centre' "$out/centre-$i.txt" | tr -s ' ')" |
            tee -a "$out/summary.txt"
        gzip -c "build/centre-$i/report.json" > "$out/centre-$i.json.gz"
    done
fi

if has centre2; then
    # The figure check's command with its listings kept (centre2-all-N),
    # and vector-add then indexing alone (centre2-va-N).
    for i in 1 2; do
        CUPROOF_CHECK_GPU_TIME=1 $bin run vector-add indexing rtc-unroll conway-global \
            conway-streams multi-kernel mandelbrot --repeat 15 --out "build/c2-all-$i" \
            > "$out/centre2-all-$i.log" 2>&1
        python3 ci/gpu-figure.py "build/c2-all-$i/report.json" > "$out/centre2-all-$i.txt" 2>&1
        echo "centre2 all $i: rc $?; $(tail -1 "$out/centre2-all-$i.txt")" | tee -a "$out/summary.txt"
        CUPROOF_CHECK_GPU_TIME=1 $bin run vector-add indexing --repeat 15 --out "build/c2-va-$i" \
            > "$out/centre2-va-$i.log" 2>&1
        python3 ci/gpu-figure.py "build/c2-va-$i/report.json" > "$out/centre2-va-$i.txt" 2>&1
        echo "centre2 vector-add, indexing $i: rc $?; $(tail -1 "$out/centre2-va-$i.txt")" |
            tee -a "$out/summary.txt"
    done
fi

if has topo; then
    { nvidia-smi topo -m; lscpu; numactl -H; nvidia-smi -q -d PERFORMANCE,CLOCK; } > "$out/topo.txt" 2>&1
    grep -E "NUMA node|^Model name|CPU\(s\):" "$out/topo.txt" | head -6 | tee -a "$out/summary.txt"
fi

if has queued; then
    for aff in all gpu; do
        t0=$(date +%s)
        CUPROOF_CPU_AFFINITY=$aff $bin run conway-streams --runs 3 --processes 5 \
            --out "build/queued-$aff" > "$out/queued-$aff.log" 2>&1
        echo "queued, affinity $aff: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
        cp "build/queued-$aff/report.json" "$out/queued-$aff.json"
    done
fi

if has levels; then
    mkdir -p build && nvcc -O2 -arch=sm_90 -o build/queued_levels ci/bench/queued_levels.cu > "$out/levels-build.log" 2>&1 ||
        echo "queued_levels: build failed" | tee -a "$out/summary.txt"
    t0=$(date +%s)
    for p in $(seq "${LEVEL_PROCS:-6}"); do
        for mode in ${LEVEL_MODES:-none streams device host all}; do
            build/queued_levels $mode 4 11 | sed "s/^/$p /" >> "$out/levels.txt" 2>&1
        done
        for c in ${LEVEL_CONNS:-1 32}; do
            CUDA_DEVICE_MAX_CONNECTIONS=$c build/queued_levels none 4 11 | sed "s/^/$p conn$c-/" \
                >> "$out/levels.txt" 2>&1
        done
    done
    echo "levels: $(wc -l < "$out/levels.txt") lines, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
fi

if has procs; then
    for p in ${PROCS:-1 3}; do
        t0=$(date +%s)
        $bin run conway-streams --runs 10 --processes $p --out "build/procs$p" > "$out/procs$p.log" 2>&1
        echo "conway-streams --runs 10 --processes $p: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
        cp "build/procs$p/report.json" "$out/procs$p.json"
    done
fi

if has mainexec; then
    fresh=$(mktemp -d)
    tar --exclude=./build --exclude=./.gpu-deps -cf - . | tar -xf - -C "$fresh"
    t0=$(date +%s)
    ( cd "$fresh" && cmake --preset main && cmake --build --preset main ) > "$out/mainexec-build.log" 2>&1
    echo "main preset build: rc $?, $(( $(date +%s) - t0 )) s; built: $(ls "$fresh/build/default" | tr '\n' ' ')" |
        tee -a "$out/summary.txt"
    ( cd "$fresh" && ./build/default/cuproof exec --expect-file tests/exec/cupy_streams.expect \
        --out "$fresh/exec-out" -- python3 tests/exec/cupy_streams.py ) > "$out/mainexec.log" 2>&1
    echo "main job's binary, exec cupy_streams.py: rc $?" | tee -a "$out/summary.txt"
    cp "$fresh/exec-out/report.json" "$out/mainexec-report.json" 2>/dev/null
fi

if has gpufull; then
    t0=$(date +%s)
    CUPROOF_REQUIRE_GPU=1 timeout "${GPUTESTS_TIME:-420}" ctest --test-dir build/default -L gpu \
        --output-on-failure > "$out/ctest-gpu-all.log" 2>&1
    echo "ctest -L gpu (every one): rc $?, $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$out/ctest-gpu-all.log")" |
        tee -a "$out/summary.txt"
fi

if has figurediag; then
    # The figure check's run with --repeat 15 (as the GPU test) and by the
    # stopping rule (as the figure step), reports kept.
    for how in repeat rule; do
        extra=()
        [ $how = repeat ] && extra=(--repeat 15)
        t0=$(date +%s)
        CUPROOF_CHECK_GPU_TIME=1 $bin run conway-streams multi-kernel conway-global indexing \
            "${extra[@]}" --out "build/fd-$how" > "$out/fd-$how.log" 2>&1
        echo "figure diag $how: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
        cp "build/fd-$how/report.json" "$out/fd-$how.json"
        python3 ci/gpu-figure.py "build/fd-$how/report.json" > "$out/fd-$how.txt" 2>&1
        tail -2 "$out/fd-$how.txt" | tee -a "$out/summary.txt"
    done
fi

if has figure; then
    # Every case judged on the GPU's time (host-threads and host-processes
    # are judged on wall time, and long).
    cases=$($bin list | awk '$1 !~ /^host-/ { print $1 }')
    # shellcheck disable=SC2086
    CUPROOF_CHECK_GPU_TIME=1 $bin run $cases --out build/figure > "$out/figure.log" 2>&1
    echo "figure run: rc $?" | tee -a "$out/summary.txt"
    cp build/figure/report.json "$out/figure.json"
    python3 ci/gpu-figure.py build/figure/report.json > "$out/figure.txt" 2>&1
    tail -3 "$out/figure.txt" | tee -a "$out/summary.txt"
fi

for n in 1 2 3; do
    if has "run$n"; then runs3 "run$n"; fi
done

if has param; then
    $bin run multi-kernel --runs 3 --out build/param0 > "$out/param0.log" 2>&1
    echo "param0: rc $?" | tee -a "$out/summary.txt"
    # 5% more work a kernel: the ci profile's 262144 floats x 1.05, rounded
    # up to a multiple of the block's 64 threads (the case's rule).
    $bin run multi-kernel --runs 3 --param len=275264 --out build/param5 > "$out/param5.log" 2>&1
    echo "param5: rc $?" | tee -a "$out/summary.txt"
    cp build/param0/report.json "$out/param0.json"
    cp build/param5/report.json "$out/param5.json"
fi

if has hostbound; then
    # ci's len is 262144 floats a thread; x1.05 rounded to mult_ker's 64
    # threads, and x4.
    for k in 5pct:275264 x4:1048576; do
        $bin run host-threads --runs 3 --param "len=${k#*:}" --out "build/hb${k%%:*}" \
            > "$out/hb${k%%:*}.log" 2>&1
        echo "host-threads len=${k#*:}: rc $?" | tee -a "$out/summary.txt"
        cp "build/hb${k%%:*}/report.json" "$out/hb${k%%:*}.json"
    done
fi

if has hb3; then
    # host-threads with 3x the work of a thread (the ci profile's 262144
    # floats x 3): a host-bound change of about 2.5x its wall time, which
    # compare must call slower (against run1.json of the sample).
    $bin run host-threads --runs 3 --param len=786432 --out build/hb3 > "$out/hb3.log" 2>&1
    echo "host-threads len=786432: rc $?" | tee -a "$out/summary.txt"
    cp build/hb3/report.json "$out/hb3.json"
fi

if has ab; then
    t0=$(date +%s)
    $bin ab "$bin" "$bin" conway-streams multi-kernel broadcast --max-time "${AB_TIME:-240}" \
        --out build/ab-self > "$out/ab-self.log" 2>&1
    echo "ab self: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
fi

if has abparam; then
    printf '#!/usr/bin/env bash\nexec %s "$@" --param len=275264\n' "$PWD/build/default/cuproof" \
        > build/more-work.sh
    chmod +x build/more-work.sh
    t0=$(date +%s)
    $bin ab "$bin" build/more-work.sh multi-kernel --max-time "${AB5_TIME:-150}" \
        --out build/ab-param > "$out/ab-param.log" 2>&1
    echo "ab 5% more work: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
fi

if [ "${PROGRESS:-0}" = 1 ]; then
    runs3 ci-runs3
fi
device_pack
