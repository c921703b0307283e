# Sourced by the ci scripts: puts the CUDA Toolkit on PATH when it is
# installed in its usual place but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi
