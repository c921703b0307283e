#!/usr/bin/env bash
# docs/DESIGN.md lists every metric and finding as the metric table
# declares them: each row that `cuproof metrics --markdown` prints stands
# in the page word for word.
# usage: docs_test.sh CUPROOF DESIGN.md
set -uo pipefail
rows=$("$1" metrics --markdown | grep '^| `') || { echo "docs_test: cuproof metrics failed" >&2; exit 1; }
[ -n "$rows" ] || { echo "docs_test: no rows" >&2; exit 1; }
missing=0
while IFS= read -r row; do
    if ! grep -qF -- "$row" "$2"; then
        echo "docs_test: $2 lacks: $row" >&2
        missing=1
    fi
done <<<"$rows"
[ $missing -eq 0 ] && echo "docs_test: $(wc -l <<<"$rows") rows, all in $2"
exit $missing
