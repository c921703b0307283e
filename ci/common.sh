# Sourced by the ci scripts, from the repository root:
#   cuproof_build PRESET   installs missing dependencies (the main job's
#                          for the preset main, which builds the cuproof
#                          command line alone; with the tests' for every
#                          other preset, all of which build the tests),
#                          puts the CUDA Toolkit on PATH when it sits in
#                          /usr/local/cuda, then configures and builds
#                          that CMake preset.
#   cuproof_pack DIR       with OUT set (the device tool's folder, which
#                          returns few files), packs DIR into
#                          $OUT/results.tar.gz; without OUT it does nothing.
#   cuproof_nsys           prints the path of Nsight Systems' nsys, or
#                          nothing when this machine has none.
#   bench_nsys             the same, else any nsys on the machine (the
#                          device machines keep it off PATH): the benchmarks'.
#   bench_ms T, bench_median  the benchmarks' timing (below).
#   bench_start [OUT_DIR]  a benchmark's start: root (the repository),
#                          the working directory there, and out (OUT_DIR,
#                          else $root/bench-out), created.
cuproof_build() {
    if [ "$1" = main ]; then
        bash ci/install-deps.sh
    else
        bash ci/install-deps.sh --tests
    fi
    if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
        export PATH="/usr/local/cuda/bin:$PATH"
    fi
    cmake --preset "$1"
    cmake --build --preset "$1"
}

cuproof_pack() {
    if [ -n "${OUT:-}" ]; then
        tar -czf "$OUT/results.tar.gz" -C "$1" . 2>/dev/null
    fi
    return 0
}

cuproof_nsys() {
    command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys \
        /usr/local/cuda/bin/nsys 2>/dev/null | head -1
}

bench_nsys() {
    local n
    n=$(cuproof_nsys)
    [ -n "$n" ] || n=$(find / -name nsys -type f 2>/dev/null | head -1)
    echo "$n"
}

# Milliseconds since a `date +%s%N` stamp, and the median of the numbers
# on standard input, one a line (the benchmarks' timing).
bench_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
bench_median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

bench_start() {
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    cd "$root" || exit 1
    out=${1:-$root/bench-out}
    mkdir -p "$out"
}
