#!/usr/bin/env bash
# Shows that tests/layers_test.sh can fail: on a copy of the sources with
# a CUDA include planted in the analysis layer, and on a build whose
# analysis library calls the CUDA runtime, it must exit 1 naming each.
# usage: layers_negative_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layers_negative_test: $*" >&2; exit 1; }

mkdir -p "$tmp/src" "$tmp/bin"
cp -r "$src/harness" "$src/reports" "$src/include" "$tmp/src/"
cp "$bin"/libcuproof_*.a "$bin"/libcuproof_inject.so "$tmp/bin/"
bash "$src/tests/layers_test.sh" "$tmp/src" "$tmp/bin" 2>/dev/null ||
    fail "the unchanged copy should pass"

# A CUDA header in the analysis layer.
printf '#include <cuda_runtime_api.h>\n' >> "$tmp/src/harness/analysis/stats.c"
out=$(bash "$src/tests/layers_test.sh" "$tmp/src" "$tmp/bin" 2>&1) && fail "a planted include passed"
grep -q "harness/analysis may not include" <<<"$out" || fail "no message for the include: $out"
grep -q "stats.c" <<<"$out" || fail "the message does not name the file: $out"
cp "$src/harness/analysis/stats.c" "$tmp/src/harness/analysis/stats.c"

# A call of the CUDA runtime in the analysis library.
printf 'int cudaMalloc(void **p, unsigned long n);\nint planted(void **p) { return cudaMalloc(p, 1); }\n' \
    > "$tmp/planted.c"
cc -c "$tmp/planted.c" -o "$tmp/planted.o" || fail "cannot compile the planted call"
ar r "$tmp/bin/libcuproof_analysis.a" "$tmp/planted.o" 2>/dev/null
out=$(bash "$src/tests/layers_test.sh" "$tmp/src" "$tmp/bin" 2>&1) && fail "a planted call passed"
grep -q "cuproof_analysis calls .*cudaMalloc" <<<"$out" || fail "no message for the call: $out"
echo "layers_negative_test: both planted violations were caught"
