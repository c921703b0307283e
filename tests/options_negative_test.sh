#!/usr/bin/env bash
# Shows that tests/options_test.sh can fail: on a copy of the command
# line's sources whose run parser gains a branch for an option that run's
# table lacks (what once made `run --processes` drop a value), and on one
# whose exec parser loses the branch of a flag its table lists, it must
# exit 1 naming each.
# usage: options_negative_test.sh SOURCE_DIR CUPROOF
set -uo pipefail
src=$1
cuproof=$(readlink -f "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "options_negative_test: $*" >&2; exit 1; }

mkdir -p "$tmp/src"
cp -r "$src/cli" "$tmp/src/"
bash "$src/tests/options_test.sh" "$tmp/src" "$cuproof" 2>/dev/null ||
    fail "the unchanged copy should pass"

# A branch for --planted in run's parser, in no table.
sed -i 's|        } else if (strcmp(opt, "--no-trace") == 0) {|        } else if (strcmp(opt, "--planted") == 0) {\n            a->runs = 2;\n&|' \
    "$tmp/src/cli/cmd_run.c"
grep -q -- '"--planted"' "$tmp/src/cli/cmd_run.c" || fail "could not plant the option"
out=$(bash "$src/tests/options_test.sh" "$tmp/src" "$cuproof" 2>&1) && fail "a planted option passed"
grep -q "cmd_run.c parses --planted, which is in no option table" <<<"$out" ||
    fail "no message for the planted option: $out"
cp "$src/cli/cmd_run.c" "$tmp/src/cli/cmd_run.c"

# exec's --keep-going branch removed: its table still lists it.
sed -i 's|strcmp(opt, "--keep-going") == 0|strcmp(opt, "--keep-goin") == 0|' "$tmp/src/cli/cmd_exec.c"
out=$(bash "$src/tests/options_test.sh" "$tmp/src" "$cuproof" 2>&1) && fail "a lost branch passed"
grep -q "exec's table lists --keep-going, but cmd_exec.c has no branch for it" <<<"$out" ||
    fail "no message for the lost branch: $out"
echo "options_negative_test: the planted option and the lost branch were caught"
