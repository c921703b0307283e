#!/usr/bin/env bash
# Issue 43 (capture windows in exec) on one GPU, each step chosen by STEP
# (several, comma-separated), so that one session's device calls share one
# build; logs, traces and figures in $OUT/results.tar.gz:
#   build     configure and build (kept between calls on a warm machine)
#   capture   the capture tests (ctest -R capture) and nvtx_ranges traced
#             whole and with --capture range:step@2-3 (full/ and window/:
#             their proc files and exec logs, the fixtures of the CPU test
#             that a window's verdicts equal the whole trace's over the
#             same steps), a window past the last step and a misspelt
#             range (each exit 3), and profiler-api on the CuPy program
#   bench     ci/bench/capture-window.sh: the CuPy and PyTorch loops of
#             3000 steps, plain / exec / exec with a 50-step window (or
#             BENCH_FORMS), in ROUNDS_CUPY and ROUNDS_TORCH (default 5)
#             alternating rounds, into bench-cupy/ and bench-torch/
#   levels    the CuPy loop plain, with the 50-step window and with a
#             window that never opens, LEVEL_ROUNDS (default 8) times in
#             turn, each run's 50-step blocks and its pure-Python
#             calibration kept (levels/FORM-I.blocks, .log), read by
#             ci/bench/capture-levels.py: the window's cost with each
#             process's own level taken out
#   nccl      issue 42: tests/exec/nccl_calls.py under torchrun on every
#             GPU there is (and on one, where there are more), traced by
#             exec: its proc files and log in nccl-N/, and how many of each
#             NCCL range carry NCCL's payload (communicator, bytes, peer)
#             and DDP (ddp_train.py --mode overlap) and FSDP
#             (fsdp_train.py) on every GPU with CUPROOF_NCCL_DEBUG=1: which
#             NCCL pushes carried a payload the decoder read, and where
#             those it did not lay (nccl-ddp/, nccl-fsdp/)
#   payloadtests  exec.nccl_calls, exec.pipeline and exec.two_groups alone
#   twogpu    the tests of two GPUs: the DDP programs (with the capture
#             window), exec.nccl_calls, issue 42's FSDP, pipeline and
#             two-group programs with their controls (their proc files
#             in i42/NAME/), and case.multi-gpu
#   execgpu   every other exec test on the GPU (`ctest -L exec`)
#   gpufull   every GPU test: `ctest -L gpu`
#   figure    issue 40's judged-figure check (CUPROOF_CHECK_GPU_TIME=1,
#             ci/gpu-figure.py) on conway-streams alone, FIGURE_ROUNDS
#             times (default 2), each report and table kept in figure-N/:
#             how far the one traced run's busy time of the ungated
#             streams-16 and streams-64 sits from their timed runs'
set -uo pipefail
# shellcheck source=ci/device-lib.sh
source ci/device-lib.sh
bin=./build/default/cuproof
steps=",${STEP:-build,capture},"
has() { [[ $steps == *",$1,"* ]]; }
# The exec tests of two GPUs (twogpu runs them, execgpu the rest).
twogpu_exec='ddp|nccl_calls|fsdp|pipeline|two_groups'

if has build || [ ! -x "$bin" ]; then
    device_build
fi

if has capture; then
    CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -R 'capture' --output-on-failure > "$out/ctest-capture.log" 2>&1
    echo "ctest -R capture: rc $?; $(grep -E 'tests passed|tests failed' "$out/ctest-capture.log")" | tee -a "$out/summary.txt"
    prog=./build/default/tests/exec/nvtx_ranges
    mkdir -p "$out/full" "$out/window"
    $bin exec --out build/cap-full --expect-file tests/exec/nvtx_ranges.expect \
        --expect 'per step: kernels >= 16' -- $prog > "$out/full/exec.log" 2>&1
    echo "nvtx_ranges whole: rc $?" | tee -a "$out/summary.txt"
    cp build/cap-full/proc/* "$out/full/"
    $bin exec --out build/cap-window --capture range:step@2-3 --expect-file tests/exec/nvtx_ranges.expect \
        --expect 'per step: kernels >= 16' -- $prog > "$out/window/exec.log" 2>&1
    echo "nvtx_ranges window 2-3: rc $?" | tee -a "$out/summary.txt"
    cp build/cap-window/proc/* "$out/window/"
    for f in "$out"/window/*.jsonl; do
        echo "$(basename "$f"): capture lines $(grep -c '"k":"capture"' "$f"), step markers $(grep -c '"name":"step"' "$f"), kernels $(grep -c '"k":"kernel"' "$f")" | tee -a "$out/summary.txt"
        grep '"k":"capture"' "$f" | tee -a "$out/summary.txt"
    done
    for f in "$out"/full/*.jsonl; do
        echo "full $(basename "$f"): step markers $(grep -c '"name":"step"' "$f"), kernels $(grep -c '"k":"kernel"' "$f")" | tee -a "$out/summary.txt"
    done
    $bin exec --out build/cap-past --capture range:step@6-9 --expect 'kernels >= 1' -- $prog > "$out/past.log" 2>&1
    echo "window past the last: rc $? ($(grep -m1 -i 'never opened' "$out/past.log"))" | tee -a "$out/summary.txt"
    $bin exec --out build/cap-misspelt --capture range:stpe --expect 'kernels >= 1' -- $prog > "$out/misspelt.log" 2>&1
    echo "misspelt range: rc $?" | tee -a "$out/summary.txt"
    cat > build/profiler_window.py <<'PY'
import cupy
x = cupy.arange(1 << 20, dtype=cupy.float32)
for i in range(30):
    if i == 10:
        cupy.cuda.profiler.start()
    x = x * 1.0001 + 1
    if i == 19:
        cupy.cuda.runtime.deviceSynchronize()
        cupy.cuda.profiler.stop()
cupy.cuda.runtime.deviceSynchronize()
print("profiler_window: done")
PY
    $bin exec --out build/cap-prof --capture profiler-api --expect 'kernels >= 10' --expect 'kernels <= 12' -- \
        python3 build/profiler_window.py > "$out/profiler.log" 2>&1
    echo "profiler-api on 10 of 30 steps: rc $?; $(grep -m1 'capture window' "$out/profiler.log"); $(grep -E '^(passed|failed)' "$out/profiler.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
    $bin exec --out build/cap-time --capture after:0.2,for:0.5 --expect 'kernels >= 1' -- \
        python3 ci/bench/long_exec.py --steps 1000 > "$out/time.log" 2>&1
    echo "after:0.2,for:0.5 on long_exec 1000: rc $?; $(grep -m1 'capture window' "$out/time.log")" | tee -a "$out/summary.txt"
fi

if has bench; then
    # Each program in its own rounds (ROUNDS_CUPY, ROUNDS_TORCH, default
    # 5), the forms BENCH_FORMS (default plain exec capture).
    for p in cupy torch; do
        t0=$(date +%s)
        r=ROUNDS_${p^^}
        ROUNDS=${!r:-5} BENCH_PROGRAMS=$p bash ci/bench/capture-window.sh "$out/bench-$p" > "$out/bench-$p.log" 2>&1
        echo "bench $p: rc $?, $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
        cat "$out/bench-$p/capture-window.txt" >> "$out/summary.txt"
    done
fi

if has blocks; then
    # Where a window's cost goes: each 50 steps' time of the CuPy loop,
    # plain and with the window of steps 1001-1050, twice each in turn.
    mkdir -p "$out/blocks"
    for i in $(seq "${BLOCK_ROUNDS:-2}"); do
        python3 ci/bench/long_exec.py --steps 3000 --blocks "$out/blocks/plain-$i.txt" > /dev/null 2>&1
        $bin exec --out build/blk --capture range:step@1001-1050 -- python3 ci/bench/long_exec.py \
            --steps 3000 --blocks "$out/blocks/capture-$i.txt" > "$out/blocks/capture-$i.log" 2>&1
        CUPROOF_EXEC_KINDS=kernel $bin exec --out build/blk --capture range:step@1001-1050 -- \
            python3 ci/bench/long_exec.py --steps 3000 --blocks "$out/blocks/kernel-$i.txt" > "$out/blocks/kernel-$i.log" 2>&1
        CUPROOF_EXEC_KINDS=runtime,driver $bin exec --out build/blk --capture range:step@1001-1050 -- \
            python3 ci/bench/long_exec.py --steps 3000 --blocks "$out/blocks/api-$i.txt" > "$out/blocks/api-$i.log" 2>&1
    done
    paste "$out"/blocks/plain-1.txt "$out"/blocks/capture-1.txt "$out"/blocks/kernel-1.txt "$out"/blocks/api-1.txt \
        > "$out/blocks/all.txt"
    awk '{for (i = 1; i <= NF; i++) { s[i] += $i; if (NR > 21) t[i] += $i } } END {printf "blocks summed (plain capture kernel api; after the window):"; for (i = 1; i <= NF; i++) printf " %.3f (%.3f)", s[i], t[i]; print ""}' \
        "$out/blocks/all.txt" | tee -a "$out/summary.txt"
    grep -h "the program failed\|exit [0-9]$" "$out"/blocks/*.log | sort | uniq -c | tee -a "$out/summary.txt"
fi

if has levels; then
    mkdir -p "$out/levels"
    for i in $(seq "${LEVEL_ROUNDS:-8}"); do
        for form in plain capture never; do
            pre=()
            case $form in
            capture) pre=($bin exec --out build/lvl --capture range:step@1001-1050 --) ;;
            never) pre=($bin exec --out build/lvl --capture range:step@1000000 --) ;;
            esac
            "${pre[@]}" python3 ci/bench/long_exec.py --steps 3000 --calibrate \
                --blocks "$out/levels/$form-$i.blocks" > "$out/levels/$form-$i.log" 2>&1
        done
    done
    python3 ci/bench/capture-levels.py "$out/levels" | tee -a "$out/summary.txt"
fi

if has nccl; then
    gpus=$(nvidia-smi -L | wc -l)
    for n in $(printf '%s\n' 1 "$gpus" | sort -un); do
        d="$out/nccl-$n"
        mkdir -p "$d"
        $bin exec --out "build/nccl-$n" -- python3 -m torch.distributed.run --nproc_per_node="$n" \
            tests/exec/nccl_calls.py > "$d/exec.log" 2>&1
        echo "nccl_calls on $n GPU(s): rc $?; $(grep -m1 'nccl_calls:' "$d/exec.log")" | tee -a "$out/summary.txt"
        cp build/nccl-$n/proc/* "$d/" 2>/dev/null
        for f in "$d"/*.jsonl; do
            [ -f "$f" ] || continue
            echo "  $(basename "$f"): $(grep '"phase":"start"' "$f" | grep -o '"name":"nccl[A-Za-z]*"[^}]*' |
                sed 's/"name":"\(nccl[A-Za-z]*\)".*"comm".*/\1+payload/; s/"name":"\(nccl[A-Za-z]*\)".*/\1/' |
                sort | uniq -c | tr -s ' ' | tr '\n' ';')" | tee -a "$out/summary.txt"
        done
    done
    for p in "ddp_train.py --mode overlap" fsdp_train.py; do
        d="$out/nccl-${p%%_*}"
        mkdir -p "$d"
        # shellcheck disable=SC2086
        CUPROOF_NCCL_DEBUG=1 $bin exec --out "build/nccl-${p%%_*}" -- python3 -m torch.distributed.run \
            --nproc_per_node="$gpus" tests/exec/$p > "$d/exec.log" 2>&1
        echo "${p%% *} with CUPROOF_NCCL_DEBUG: rc $?" | tee -a "$out/summary.txt"
        grep 'NCCL domain pushes\|NCCL push not decoded' "$d/exec.log" | tee -a "$out/summary.txt"
        cp "build/nccl-${p%%_*}"/proc/* "$d/" 2>/dev/null
    done
fi

if has payloadtests; then
    # The exec tests that rest on NCCL's payloads, alone.
    CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -R 'exec\.(nccl_calls|pipeline|two_groups)$' \
        --output-on-failure > "$out/ctest-payloads.log" 2>&1
    echo "payload tests: rc $?; $(grep -E 'tests passed|tests failed' "$out/ctest-payloads.log")" |
        tee -a "$out/summary.txt"
fi

if has twogpu; then
    t0=$(date +%s)
    CUPROOF_REQUIRE_GPU=1 ctest --test-dir build/default -R "exec\.($twogpu_exec)|case\.multi-gpu" \
        --output-on-failure > "$out/ctest-twogpu.log" 2>&1
    echo "two-GPU tests: rc $?, $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$out/ctest-twogpu.log")" |
        tee -a "$out/summary.txt"
    for t in build/default/tests/exec/exec-out/{fsdp,pipeline,two_groups}*; do
        [ -d "$t" ] || continue
        mkdir -p "$out/i42/${t##*/}"
        cp "$t"/proc/* "$t"/*.json "$out/i42/${t##*/}/" 2>/dev/null
    done
fi

if has execgpu; then
    t0=$(date +%s)
    CUPROOF_REQUIRE_GPU=1 timeout "${GPUTESTS_TIME:-420}" ctest --test-dir build/default -L exec \
        -E "exec\.($twogpu_exec)" --output-on-failure > "$out/ctest-exec.log" 2>&1
    echo "ctest -L exec: rc $?, $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$out/ctest-exec.log")" |
        tee -a "$out/summary.txt"
fi

if has gpufull; then
    t0=$(date +%s)
    CUPROOF_REQUIRE_GPU=1 timeout "${GPUTESTS_TIME:-420}" ctest --test-dir build/default -L gpu \
        --output-on-failure > "$out/ctest-gpu-all.log" 2>&1
    echo "ctest -L gpu: rc $?, $(( $(date +%s) - t0 )) s; $(grep -E 'tests passed|tests failed' "$out/ctest-gpu-all.log")" |
        tee -a "$out/summary.txt"
fi
if has figure; then
    for i in $(seq "${FIGURE_ROUNDS:-2}"); do
        d="$out/figure-$i"
        mkdir -p "$d"
        CUPROOF_CHECK_GPU_TIME=1 $bin run conway-streams --repeat 15 --out "$d" > "$d/run.log" 2>&1
        python3 ci/gpu-figure.py "$d/report.json" > "$d/table.txt" 2>&1
        echo "figure $i: rc $?; $(grep -E 'streams-(16|64) ' "$d/table.txt" | tr -s ' ' | tr '\n' ';')" |
            tee -a "$out/summary.txt"
        gzip -f "$d/report.json"
        rm -f "$d/report.html"
    done
fi
device_pack
