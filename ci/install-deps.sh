#!/usr/bin/env bash
# Installs what cuproof needs on a fresh Debian/Ubuntu machine, skipping
# what is there. The CUDA Toolkit (12 or later; nvcc, CUPTI, NVRTC, NVTX)
# is not a Debian package of the right version: it must already be
# installed, normally under /usr/local/cuda.
set -euo pipefail
pkgs="cmake ninja-build pkg-config gcc libcriterion-dev libcjson-dev gcovr chromium clang"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi
# libFuzzer's runtime comes with the compiler-rt package of clang's version.
rt="libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
if ! dpkg -s "$rt" >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$rt"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "install-deps: the CUDA Toolkit (nvcc) was not found; install CUDA 12 or later" >&2
    exit 1
fi
