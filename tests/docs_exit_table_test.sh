#!/usr/bin/env bash
# README.md's exit-code table is CP_EXIT_MAP (include/cuproof/exit.h), the
# one table every command shares: a row "| STATUS | MEANING |" per entry,
# its text word for word, and no other row.
# usage: docs_exit_table_test.sh EXIT_H README.md
set -uo pipefail
[ $# -eq 2 ] || {
    echo "usage: docs_exit_table_test.sh EXIT_H README.md" >&2
    exit 2
}
rows=$(perl -0777 -ne '
    /#define CP_EXIT_MAP\(XX\)(.*?)\n\s*\n/s or die "no CP_EXIT_MAP\n";
    (my $m = $1) =~ s/\\\n/ /g;
    while ($m =~ /XX\(\s*\w+\s*,\s*(\d+)\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)/g) {
        my ($n, $t) = ($1, $2);
        my $text = join "", ($t =~ /"((?:[^"\\]|\\.)*)"/g);
        print "| $n | $text |\n";
    }' "$1") || exit 1
[ -n "$rows" ] || { echo "docs_exit_table: no rows in $1" >&2; exit 1; }
table=$(grep -E '^\| [0-9]+ \| ' "$2")
bad=0
while IFS= read -r row; do
    grep -qxF -- "$row" <<<"$table" || { echo "docs_exit_table: $2 lacks: $row" >&2; bad=1; }
done <<<"$rows"
while IFS= read -r row; do
    grep -qxF -- "$row" <<<"$rows" || { echo "docs_exit_table: $2 has a row CP_EXIT_MAP does not: $row" >&2; bad=1; }
done <<<"$table"
[ $bad -eq 0 ] && echo "docs_exit_table: $(wc -l <<<"$rows") statuses, all in $2 as CP_EXIT_MAP states them"
exit $bad
