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
