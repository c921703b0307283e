#!/usr/bin/env bash
# The docs tests can fail: a page with a wrong exit code, an unmarked sh
# block and a C block that does not compile, a page and a source comment
# that name paths that do not exist, a docs/cli.md whose exit table says 7
# where CP_EXIT_MAP says 4, and a README that copies the table, must each
# make docs_snippets_test.sh,
# docs_paths_test.sh or docs_exit_table_test.sh fail, naming the fault.
# usage: docs_negative_test.sh CUPROOF BUILD_DIR SOURCE_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cuproof=$1 build=$2 src=$(cd "$3" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuproof-docs-neg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
expect_in() { # expect_in OUTPUT TEXT: the failing test named TEXT
    if grep -qF -- "$2" <<<"$1"; then
        echo "docs_negative: ok: caught: $2"
    else
        echo "docs_negative: FAILED: not caught: $2" >&2
        bad=1
    fi
}

cat >"$tmp/planted.md" <<'PAGE'
# A page with planted faults

<!-- docs-test: exit=0 -->
```sh
./build/default/cuproof check tests/fixtures/exec-h100/cupy-serial.trace.json --expect 'peak_concurrent_kernels > 1'
```

```sh
echo an unmarked block
```

<!-- docs-test: file=broken/broken.c -->
```c
int main(void) { return undefined_name; }
```

<!-- docs-test: exit=0 -->
```sh
cc -c broken/broken.c -o broken/broken.o
```

See harness/no-such-file.c and [a link](no-such-page.md).
PAGE
out=$(bash "$here/docs_snippets_test.sh" "$cuproof" "$build" "$src" "$tmp/planted.md" 2>&1)
rc=$?
[ $rc -eq 1 ] || { echo "docs_negative: FAILED: docs_snippets_test.sh exited $rc, not 1" >&2; bad=1; }
expect_in "$out" "planted.md:4: exited 1, the page says 0"
expect_in "$out" "planted.md:8: a 'sh' block without a <!-- docs-test: ... --> marker"
expect_in "$out" "planted.md:18: exited 1, the page says 0"

printf '/* the trace reader (reports/no_such_reader.c) */\nint x;\n' >"$tmp/planted.c"
out=$(bash "$here/docs_paths_test.sh" "$src" "$tmp/planted.md" "$tmp/planted.c" 2>&1)
rc=$?
[ $rc -eq 1 ] || { echo "docs_negative: FAILED: docs_paths_test.sh exited $rc, not 1" >&2; bad=1; }
expect_in "$out" "$tmp/planted.md:22: harness/no-such-file.c"
expect_in "$out" "$tmp/planted.md:22: $tmp/no-such-page.md"
expect_in "$out" "$tmp/planted.c:1: reports/no_such_reader.c"
sed 's/^| 4 | exec/| 7 | exec/' "$src/docs/cli.md" >"$tmp/cli.md"
out=$(bash "$here/docs_exit_table_test.sh" "$src/include/cuproof/exit.h" "$tmp/cli.md" \
    "$src/README.md" 2>&1)
rc=$?
[ $rc -eq 1 ] || { echo "docs_negative: FAILED: docs_exit_table_test.sh exited $rc, not 1" >&2; bad=1; }
expect_in "$out" "has a row CP_EXIT_MAP does not: | 7 | exec:"
{ cat "$src/README.md"; echo '| 4 | exec: the program failed |'; } >"$tmp/README.md"
out=$(bash "$here/docs_exit_table_test.sh" "$src/include/cuproof/exit.h" "$src/docs/cli.md" \
    "$tmp/README.md" 2>&1)
rc=$?
[ $rc -eq 1 ] || { echo "docs_negative: FAILED: docs_exit_table_test.sh exited $rc, not 1" >&2; bad=1; }
expect_in "$out" "holds a copy of the exit table"
exit $bad
