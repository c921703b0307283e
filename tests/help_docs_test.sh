#!/usr/bin/env bash
# docs/cli.md is `cuproof help --markdown` as committed: generated from
# the table that prints `cuproof help` and the man page (cli/commands.c), it
# must be refreshed when that table changes. Fails with the difference
# and the command that refreshes the page.
# usage: help_docs_test.sh CUPROOF CLI.md
set -uo pipefail
cuproof=$1 doc=$2
tmp=$(mktemp "${TMPDIR:-/tmp}/cuproof-cli-md.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$cuproof" help --markdown >"$tmp" || { echo "help_docs_test: cuproof help --markdown failed" >&2; exit 1; }
if ! diff -u "$doc" "$tmp" >&2; then
    echo "help_docs_test: $doc differs from 'cuproof help --markdown' (- committed, + generated)." >&2
    echo "Refresh it, from the repository root: build/default/cuproof help --markdown > docs/cli.md" >&2
    exit 1
fi
echo "help_docs_test: $doc is up to date ($(wc -l <"$doc") lines)"
