#!/usr/bin/env bash
# The docs run: every fenced block of the pages given is run or built as
# the marker before it says (docs/testing.md, "The docs test"):
#
#   <!-- docs-test: exit=N -->     an sh block: run it; it must exit N
#   <!-- docs-test: gpu -->        an sh block that needs a GPU: skipped, named
#   <!-- docs-test: skip (why) --> a block not run, for the reason given
#   <!-- docs-test: file=PATH -->  a c or cmake block: appended to PATH, so a
#                                  page's blocks make one file; built by a
#                                  later sh block of the page
#
# An sh or c block without a marker fails the test: a reader sees which
# blocks are tested. The blocks run in order, in one scratch directory that
# holds links to the repository's samples/, tests/ and examples/, under
# `bash -e -o pipefail`; in them `./build/default/cuproof` stands for the
# cuproof under test, `build/default` for its build directory, `/opt/cuproof`
# for a prefix in the scratch directory, and the line that builds cuproof
# (`cmake --preset default && cmake --build --preset default`) is left out:
# the test runs inside that build. Pages are read in the order given (the
# README first: its install serves the pages after it).
#
# usage: docs_snippets_test.sh CUPROOF BUILD_DIR SOURCE_DIR PAGE.md...
# (DOCS_TEST_KEEP=1 keeps the scratch directory and each block's log.)
# Exit 0 when every block held, else 1 with each failure as file:line.
set -uo pipefail
[ $# -ge 4 ] || {
    echo "usage: docs_snippets_test.sh CUPROOF BUILD_DIR SOURCE_DIR PAGE.md..." >&2
    exit 2
}
cuproof=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
build=$(cd "$2" && pwd)
src=$(cd "$3" && pwd)
shift 3

scratch=$(mktemp -d "${TMPDIR:-/tmp}/cuproof-docs.XXXXXX")
# DOCS_TEST_KEEP=1 keeps the scratch directory (its path is printed).
if [ "${DOCS_TEST_KEEP:-}" = 1 ]; then
    echo "docs_test: scratch directory $scratch (kept)"
else
    trap 'rm -rf "$scratch"' EXIT
fi
mkdir -p "$scratch/run" "$scratch/blocks"
for d in samples tests examples; do
    ln -s "$src/$d" "$scratch/run/$d"
done
export PATH="/usr/local/cuda/bin:$PATH"

failed=0 ran=0 skipped=0 built=0
fail() {
    echo "docs_test: FAILED: $*" >&2
    failed=1
}

# extract PAGE: writes each fenced block to $scratch/blocks/N and prints
# "N<TAB>LINE<TAB>LANG<TAB>MARKER" for each (MARKER: the marker's words
# from the last non-blank line before the fence, or empty).
extract() {
    awk -v dir="$scratch/blocks" '
        function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        !inblock && /^[ \t]*```/ {
            inblock = 1; n++; line = NR; lang = trim($0); sub(/^```/, "", lang)
            indent = match($0, /[^ ]/) - 1
            out = dir "/" n; printf "" > out
            printf "%d\t%d\t%s\t%s\n", n, NR, lang, last_marker
            next
        }
        inblock && /^[ \t]*```[ \t]*$/ { inblock = 0; close(out); last_marker = ""; next }
        inblock { s = $0; if (indent > 0) s = substr(s, indent + 1); print s > out; next }
        /^[ \t]*$/ { next }
        {
            last_marker = ""
            if (match($0, /<!-- docs-test: .* -->/)) {
                m = substr($0, RSTART + 15, RLENGTH - 19); last_marker = trim(m)
            }
        }
    ' "$1"
}

# The block as the scratch directory runs it.
rewrite() {
    grep -vxF 'cmake --preset default && cmake --build --preset default' "$1" |
        sed -e 's#\./build/default/cuproof#@CUPROOF@#g' -e 's#build/default#@BUILD@#g' \
            -e 's#/opt/cuproof#@PREFIX@#g' |
        sed -e "s#@CUPROOF@#$cuproof#g" -e "s#@BUILD@#$build#g" -e "s#@PREFIX@#$scratch/run/prefix#g"
}

for page in "$@"; do
    rel=${page#"$src"/}
    : >"$scratch/blocks.tsv"
    extract "$page" >"$scratch/blocks.tsv"
    while IFS=$'\t' read -r n line lang marker; do
        where="$rel:$line"
        block="$scratch/blocks/$n"
        case "$marker" in
        file=*)
            path=${marker#file=}
            mkdir -p "$scratch/run/$(dirname "$path")"
            cat "$block" >>"$scratch/run/$path"
            built=$((built + 1))
            echo "docs_test: $where: $lang block appended to $path"
            ;;
        gpu)
            skipped=$((skipped + 1))
            echo "docs_test: $where: skipped: needs a GPU"
            ;;
        skip*)
            skipped=$((skipped + 1))
            echo "docs_test: $where: not run: ${marker#skip}"
            ;;
        exit=*)
            want=${marker#exit=}
            [ "$lang" = sh ] || {
                fail "$where: an exit= marker on a '$lang' block (only sh blocks run)"
                continue
            }
            rewrite "$block" >"$scratch/script.sh"
            log="$scratch/$(tr / _ <<<"$rel")-$line.log"
            (cd "$scratch/run" && env -u CUPROOF_REQUIRE_GPU bash -e -o pipefail "$scratch/script.sh") \
                >"$log" 2>&1 </dev/null
            got=$?
            ran=$((ran + 1))
            if [ "$got" = "$want" ]; then
                echo "docs_test: $where: exit $got, as the page says"
            else
                sed 's/^/    /' "$log" | tail -n 40 >&2
                fail "$where: exited $got, the page says $want"
            fi
            ;;
        "")
            case "$lang" in
            sh | c) fail "$where: a '$lang' block without a <!-- docs-test: ... --> marker" ;;
            esac
            ;;
        *)
            fail "$where: unknown marker 'docs-test: $marker'"
            ;;
        esac
    done <"$scratch/blocks.tsv"
done
echo "docs_test: $ran blocks run, $built written into files, $skipped skipped by their markers"
exit $failed
