# What every ci/device-*.sh script shares, sourced from the repository
# root on the device: the staged libraries (.gpu-deps, carried), the CUDA
# tools on PATH, the output folder `out` ($OUT, the device tool's, else
# device-out), and device_pack, which leaves everything under `out` in
# one results.tar.gz (the device tool returns a few files only).
# shellcheck disable=SC1091
source .gpu-deps/env.sh
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-device-out}
out=${out%/}
mkdir -p "$out"

device_pack() {
    tar -czf "$out.tar.gz" -C "$out" . && rm -rf "${out:?}"/* && mv "$out.tar.gz" "$out/results.tar.gz"
}

# Configures and builds the default preset into build/default when STEP
# asks for it (`has build`, the caller's) or there is no binary yet; the
# logs in $out, the time in summary.txt; on failure the last lines, the
# pack, and exit 1.
device_build() {
    local start
    start=$(date +%s)
    cmake --preset default > "$out/configure.log" 2>&1 && cmake --build --preset default > "$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; device_pack; exit 1; }
    echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
}
