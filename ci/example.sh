#!/usr/bin/env bash
# Proves the installable package from outside, with examples/my-cases (a
# project of its own with one case, copy-overlap):
#
#   ci/example.sh [BUILD_DIR] [install|subdirectory|all]
#
#   install       `cmake --install BUILD_DIR` into a temporary prefix; the
#                 installed bin/cuproof runs (libcuproof through its RPATH), lists the
#                 built-in cases and prints the project's version; the
#                 example configured with -DCMAKE_PREFIX_PATH=<prefix> finds
#                 cuproof there, builds, and its ctest runs exactly one test,
#                 skipped (no GPU) or passed; and the example with a typo in
#                 its case's expectations (peak_concurent_kernels) builds,
#                 but its `list` exits 2 and its ctest fails, with or
#                 without a GPU, naming copy_overlap.c, the line and column;
#   subdirectory  the example with -DCUPROOF_SOURCE_DIR=<this checkout>
#                 (add_subdirectory): it builds, and its ctest runs exactly
#                 one test (cuproof's own tests are off), skipped or passed;
#   all           both (the default).
#
# BUILD_DIR (default build/default) is a configured and built tree of this
# checkout. With CUPROOF_REQUIRE_GPU=1 the example's test must pass, not
# skip. The example is built for sm_90 only, to stay quick. Temporary
# directories are removed on exit. Exit status 0 when every step held,
# else 1 with the step and its log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
mode=${2:-all}
case "$mode" in
install | subdirectory | all) ;;
*)
    echo "usage: ci/example.sh [BUILD_DIR] [install|subdirectory|all]" >&2
    exit 2
    ;;
esac

fail() {
    echo "ci/example.sh: FAILED: $*" >&2
    exit 1
}

[ -f "$build/CMakeCache.txt" ] || fail "$build is not a configured build directory"
build=$(cd "$build" && pwd)
command -v ninja >/dev/null || fail "ninja is not installed (the example is configured with -G Ninja)"
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
unset DESTDIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuproof-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# step NAME COMMAND...: runs the command with its output in a log, which is
# shown when it fails.
step() {
    local name=$1 log
    shift
    log="$tmp/$(echo "$name" | tr -c 'A-Za-z0-9\n' '_').log"
    if ! "$@" >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        fail "$name: '$*' exited non-zero (the log's end is above)"
    fi
    echo "ci/example.sh: ok: $name"
}

version=$(sed -n 's/^project(cuproof VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no project(cuproof VERSION ...) in $root/CMakeLists.txt"

# ctest_one DIR: the example's ctest ran exactly its two tests (the case
# and the same program under cuproof exec), each passed or (unless
# CUPROOF_REQUIRE_GPU=1) skipped.
ctest_one() {
    local dir=$1 out rc=0
    out=$(ctest --test-dir "$dir" --output-on-failure 2>&1) || rc=$?
    echo "$out" >"$dir/ctest.log"
    if [ "$rc" -ne 0 ]; then
        echo "$out" >&2
        fail "ctest in $dir exited $rc"
    fi
    # ctest 3.25 ends "100% tests passed, 0 tests failed out of 2"; 3.28 "100% tests passed out of 2".
    grep -Eq 'tests passed(, 0 tests failed)? out of 2$' <<<"$out" || {
        echo "$out" >&2
        fail "ctest in $dir did not run exactly two tests"
    }
    if grep -q 'exec\.copy-overlap-app .*\*\*\*Skipped' <<<"$out"; then
        [ "${CUPROOF_REQUIRE_GPU:-}" != 1 ] || fail "exec.copy-overlap-app was skipped but CUPROOF_REQUIRE_GPU=1"
        echo "ci/example.sh: ok: exec.copy-overlap-app ran and was skipped (no GPU)"
    elif grep -q 'exec\.copy-overlap-app .*Passed' <<<"$out"; then
        echo "ci/example.sh: ok: exec.copy-overlap-app ran and passed"
    else
        echo "$out" >&2
        fail "exec.copy-overlap-app neither passed nor was skipped"
    fi
    if grep -q 'case\.copy-overlap .*\*\*\*Skipped' <<<"$out"; then
        [ "${CUPROOF_REQUIRE_GPU:-}" != 1 ] || {
            echo "$out" >&2
            fail "case.copy-overlap was skipped but CUPROOF_REQUIRE_GPU=1"
        }
        echo "ci/example.sh: ok: case.copy-overlap ran and was skipped (no GPU)"
    elif grep -q 'case\.copy-overlap .*Passed' <<<"$out"; then
        echo "ci/example.sh: ok: case.copy-overlap ran and passed"
    else
        echo "$out" >&2
        fail "case.copy-overlap neither passed nor was skipped"
    fi
}

# The installed programs must find libcuproof and CUDA's libraries through
# their RPATH, so they run with no build directory on the library path. A
# dependency staged outside the system (cJSON in .gpu-deps/ on an offline
# GPU machine) stays on it: the package's users get it from libcjson1.
ld_path=$(tr ':' '\n' <<<"${LD_LIBRARY_PATH:-}" | { grep -v -e "^$build" -e '^$' || true; } | paste -sd: -)
installed() {
    LD_LIBRARY_PATH="$ld_path" "$@"
}

example_configure_build() {
    local dir=$1
    shift
    step "configure the example ($(basename "$dir"))" cmake -S "$root/examples/my-cases" -B "$dir" \
        -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
    step "build the example ($(basename "$dir"))" cmake --build "$dir"
    # The example's executable holds its case and cuproof's command line.
    local listed
    listed=$(installed "$dir/copy-overlap" list) ||
        fail "$dir/copy-overlap list exited non-zero"
    grep -q '^copy-overlap ' <<<"$listed" ||
        fail "'copy-overlap list' does not list copy-overlap: $listed"
}

if [ "$mode" = install ] || [ "$mode" = all ]; then
    prefix=$tmp/prefix
    step "install $build into a temporary prefix" cmake --install "$build" --prefix "$prefix"
    for f in bin/cuproof include/cuproof/case.h include/cuproof/version.h \
        lib/cmake/cuproof/cuproofConfig.cmake lib/cmake/cuproof/cuproofConfigVersion.cmake \
        lib/cmake/cuproof/cuproofTargets.cmake lib/cmake/cuproof/cuproofCase.cmake \
        share/man/man1/cuproof.1; do
        [ -e "$prefix/$f" ] || fail "the install lacks $f"
    done
    ls "$prefix"/lib*/libcuproof.so >/dev/null 2>&1 || fail "the install lacks libcuproof.so"
    ls "$prefix"/lib*/libcuproof_inject.so >/dev/null 2>&1 ||
        fail "the install lacks libcuproof_inject.so (cuproof exec's injection library)"
    # The installed executable finds its library and CUDA's through its RPATH.
    got=$(installed "$prefix/bin/cuproof" --version) ||
        fail "installed bin/cuproof --version exited non-zero"
    [ "$got" = "cuproof $version" ] || fail "bin/cuproof --version printed '$got', not 'cuproof $version'"
    lib=$(installed ldd "$prefix/bin/cuproof" | awk '$1 ~ /^libcuproof/ {print $3}')
    case "$lib" in
    "$prefix"/*) echo "ci/example.sh: ok: bin/cuproof loads $lib" ;;
    *) fail "installed bin/cuproof loads libcuproof from '$lib', not from the prefix" ;;
    esac
    echo "ci/example.sh: ok: bin/cuproof --version: $got"
    listed=$(installed "$prefix/bin/cuproof" list) ||
        fail "installed bin/cuproof list exited non-zero"
    if grep -q '^CUPROOF_BUILD_CASES:BOOL=OFF' "$build/CMakeCache.txt"; then
        [ -z "$listed" ] || fail "built without cases, yet bin/cuproof list printed: $listed"
        echo "ci/example.sh: ok: bin/cuproof list is empty (built without cases)"
    else
        grep -q '^multi-kernel ' <<<"$listed" ||
            fail "installed bin/cuproof list does not list multi-kernel: $listed"
        echo "ci/example.sh: ok: bin/cuproof list lists multi-kernel ($(echo "$listed" | wc -l) cases)"
    fi

    example_configure_build "$tmp/against-install" -DCMAKE_PREFIX_PATH="$prefix"
    found=$(sed -n 's/^cuproof_DIR:PATH=//p' "$tmp/against-install/CMakeCache.txt")
    [ "$found" = "$prefix/lib/cmake/cuproof" ] || [ "$found" = "$prefix/lib64/cmake/cuproof" ] ||
        fail "the example found cuproof in '$found', not in the temporary prefix"
    ctest_one "$tmp/against-install"

    # A typo in the case's expectations fails a CPU-only CI too: the case
    # is checked before it would be skipped for want of a GPU.
    cp -r "$root/examples/my-cases" "$tmp/typo-src"
    sed -i 's/"streams: no finding cuda_memcpy_async\\n"/"streams: peak_concurent_kernels > 1\\n"/' \
        "$tmp/typo-src/copy_overlap.c"
    grep -q peak_concurent_kernels "$tmp/typo-src/copy_overlap.c" || fail "the typo was not planted"
    step "configure the example with a typo" cmake -S "$tmp/typo-src" -B "$tmp/typo" -G Ninja \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$prefix"
    step "build the example with a typo" cmake --build "$tmp/typo"
    rc=0
    said=$(installed "$tmp/typo/copy-overlap" list 2>&1 >/dev/null) || rc=$?
    [ "$rc" = 2 ] || fail "copy-overlap list with a typo exited $rc, not 2: $said"
    # The place in the .expect text, and the line of the source holding it.
    grep -qE "copy_overlap.c: case copy-overlap: its expectations, line 3, column 10 \(.*copy_overlap.c:[0-9]+\): unknown metric 'peak_concurent_kernels' \(did you mean 'peak_concurrent_kernels'\?\)" <<<"$said" ||
        fail "copy-overlap list with a typo did not name the file, line and column and the source line: $said"
    echo "ci/example.sh: ok: list names the typo: $said"
    rc=0
    out=$(ctest --test-dir "$tmp/typo" -R 'case[.]copy-overlap$' --output-on-failure 2>&1) || rc=$?
    [ "$rc" != 0 ] || { echo "$out" >&2; fail "ctest passed the case with a typo"; }
    grep -q "peak_concurent_kernels" <<<"$out" || { echo "$out" >&2; fail "the failing test's log does not name the typo"; }
    echo "ci/example.sh: ok: ctest fails the case with a typo (exit $rc)"
fi

if [ "$mode" = subdirectory ] || [ "$mode" = all ]; then
    example_configure_build "$tmp/with-subdirectory" -DCUPROOF_SOURCE_DIR="$root"
    ctest_one "$tmp/with-subdirectory"
fi
echo "ci/example.sh: $mode: every step held"
