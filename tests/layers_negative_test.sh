#!/usr/bin/env bash
# Shows that tests/layers_test.sh can fail: on a copy of the sources with
# a CUDA include planted in the analysis layer, on a build whose analysis
# library calls the CUDA runtime, on one whose reports library has two
# writers calling each other, one whose compare/ printer calls back the
# comparison that calls it, one whose reports/ calls into judge/, and one
# whose command line's arguments call back its dispatch, it must exit 1
# naming each.
# usage: layers_negative_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layers_negative_test: $*" >&2; exit 1; }

mkdir -p "$tmp/src" "$tmp/bin"
cp -r "$src/harness" "$src/reports" "$src/compare" "$src/judge" "$src/include" "$tmp/src/"
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
cp "$bin/libcuproof_analysis.a" "$tmp/bin/"

# plant LIB MEMBER SOURCE WHAT: LIB's MEMBER (NAME.c.o) replaced by
# SOURCE compiled, layers_test.sh run on it, which must fail (its output
# in $out); LIB put back afterwards.
plant() {
    printf '%b' "$3" > "$tmp/$2"
    cc -c "$tmp/$2" -o "$tmp/$2.o" || fail "cannot compile the planted $4"
    (cd "$tmp" && ar r "$tmp/bin/lib$1.a" "$2.o" 2>/dev/null)
    out=$(bash "$src/tests/layers_test.sh" "$tmp/src" "$tmp/bin" 2>&1) && fail "a planted $4 passed"
    cp "$bin/lib$1.a" "$tmp/bin/"
}

# A writer that calls back the format choice that calls it: chrome.c.o
# replaced by one whose cp_perfetto_write asks perfetto.c for the suffix.
plant cuproof_reports chrome.c 'const char *cp_perfetto_suffix(const void *t);\nint cp_perfetto_write(void) { return cp_perfetto_suffix(0) != 0; }\n' \
    "circle"
grep -q "reports/ call each other in a circle" <<<"$out" || fail "no message for the circle: $out"
grep -q "chrome.c.o" <<<"$out" || fail "the message does not name the files: $out"

# A circle inside compare/: compare.c.o replaced by one whose comparison
# calls the text printer, which calls compare.c for its shown times.
plant cuproof_reports compare.c 'int cp_compare_print_text(const void *c, void *out);\nvoid cp_cmp_shown_times(void) {}\nint cp_compare_files(void) { return cp_compare_print_text(0, 0); }\n' \
    "circle in compare/"
grep -q "the files of compare/ call each other in a circle" <<<"$out" ||
    fail "no message for the circle in compare/: $out"

# An arrow from reports/ into judge/: file.c.o replaced by one that asks
# the judge whether a run failed.
plant cuproof_reports file.c 'int cp_program_run_failed(const void *r);\nint cp_write_file(const char *p, const char *t) { return cp_program_run_failed(p) + !t; }\n' \
    "arrow into judge/"
grep -q "reports/file.c calls judge/judge.c" <<<"$out" || fail "no message for the arrow: $out"

# A circle in the command line: args.c.o replaced by one whose usage error
# calls the dispatch, which calls it.
plant cuproof_main args.c 'int cp_cli_main(int argc, char **argv);\nint cp_usage_error(const char *f, const char *a) { return cp_cli_main(0, 0) + !f + !a; }\n' \
    "circle in cli/"
grep -q "the files of cuproof_main call each other in a circle" <<<"$out" ||
    fail "no message for the circle in cli/: $out"
echo "layers_negative_test: the six planted violations were caught"
