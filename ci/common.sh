# Sourced by the ci scripts, from the repository root:
#   cuproof_build PRESET   installs missing dependencies, puts the CUDA
#                          Toolkit on PATH when it sits in /usr/local/cuda,
#                          then configures and builds that CMake preset.
cuproof_build() {
    bash ci/install-deps.sh
    if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
        export PATH="/usr/local/cuda/bin:$PATH"
    fi
    cmake --preset "$1"
    cmake --build --preset "$1"
}
