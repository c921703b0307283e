#!/usr/bin/env bash
# Installs what cuproof needs on a fresh Debian/Ubuntu machine, skipping
# what is there:
#
#   ci/install-deps.sh           the main job's (ci/run-all.sh): what builds
#                                the cuproof command line (cmake, ninja,
#                                pkg-config, gcc, cJSON)
#   ci/install-deps.sh --tests   those and the tests' (ci/test.sh,
#                                ci/coverage.sh, ci/fuzz.sh): Criterion,
#                                gcovr, Chromium (the browser test), clang
#                                and its compiler-rt (libFuzzer), groff
#                                (the man page test)
#
# The split keeps the main job's first minute free of packages it never
# uses. The CUDA Toolkit (12 or later; nvcc, CUPTI, NVRTC, NVTX) is not a
# Debian package of the right version: it must already be installed,
# normally under /usr/local/cuda. Exit status 2 for an unknown argument.
set -euo pipefail
tests=0
case "${1:-}" in
"") ;;
--tests) tests=1 ;;
*)
    echo "install-deps: unknown argument '$1'; usage: ci/install-deps.sh [--tests]" >&2
    exit 2
    ;;
esac
[ $# -le 1 ] || { echo "install-deps: one argument at most; usage: ci/install-deps.sh [--tests]" >&2; exit 2; }

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=0
# install PKG...: apt-get installs those of PKG not installed yet.
install() {
    local missing="" p
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    if [ $updated -eq 0 ]; then
        $sudo apt-get update -qq
        updated=1
    fi
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
}

install cmake ninja-build pkg-config gcc libcjson-dev
if [ $tests -eq 1 ]; then
    install libcriterion-dev gcovr chromium clang groff-base
    # libFuzzer's runtime comes with the compiler-rt package of clang's version.
    install "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "install-deps: the CUDA Toolkit (nvcc) was not found; install CUDA 12 or later" >&2
    exit 1
fi
