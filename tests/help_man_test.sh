#!/usr/bin/env bash
# The man page says what `cuproof help` says: the built cuproof.1,
# rendered by groff as `man` would show it, holds the same words in the
# same order as `cuproof help`. Only the page's own frame is set aside:
# its header and footer lines and its NAME section; its SYNOPSIS heading
# is the help's "usage:". Layout (wrapping, indentation) is not compared:
# troff fills lines its own way. Then it plants a difference (one word of
# a copy of the page changed) and must see the comparison fail, so a pass
# means something.
# usage: help_man_test.sh CUPROOF MAN_PAGE
set -uo pipefail
cuproof=$1 page=$2
command -v groff >/dev/null || {
    echo "help_man_test: groff is not installed (ci/install-deps.sh --tests installs groff-base)" >&2
    exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuproof-help-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# words FILE: one word a line.
words() { tr -s '[:space:]' '\n' <"$1" | sed '/^$/d'; }

# rendered PAGE: the page's words as man shows them, without its frame.
rendered() {
    groff -man -Tascii -P-cbou "$1" >"$tmp/man.txt" 2>"$tmp/groff.err"
    if [ -s "$tmp/groff.err" ]; then
        echo "help_man_test: groff warns about $1:" >&2
        cat "$tmp/groff.err" >&2
        return 1
    fi
    # First and last non-blank lines: the header and footer; NAME: from
    # its heading up to SYNOPSIS.
    sed '/^[[:space:]]*$/d' "$tmp/man.txt" | sed '1d;$d' |
        sed '/^NAME$/,/^SYNOPSIS$/{/^SYNOPSIS$/!d}' | sed 's/^SYNOPSIS$/usage:/' >"$tmp/man.body"
    words "$tmp/man.body"
}

# same PAGE: the page against `cuproof help`; prints the first difference.
same() {
    rendered "$1" >"$tmp/man.words" || return 1
    words "$tmp/help.txt" >"$tmp/help.words"
    [ -s "$tmp/man.words" ] || { echo "help_man_test: $1 renders empty" >&2; return 1; }
    if ! diff -u "$tmp/help.words" "$tmp/man.words" >"$tmp/diff"; then
        echo "help_man_test: $1 and 'cuproof help' differ (words; - help, + man page):" >&2
        head -20 "$tmp/diff" >&2
        return 1
    fi
}

"$cuproof" help >"$tmp/help.txt" || { echo "help_man_test: cuproof help failed" >&2; exit 1; }
[ -f "$page" ] || { echo "help_man_test: no man page at $page (build the cuproof_man target)" >&2; exit 1; }
same "$page" || exit 1
echo "help_man_test: $page and 'cuproof help' say the same $(wc -l <"$tmp/help.words") words"

# The planted difference: one word of the page's text changed.
sed '0,/stopping rule/s//stopping rules/' "$page" >"$tmp/planted.1"
cmp -s "$page" "$tmp/planted.1" && { echo "help_man_test: nothing to plant in $page" >&2; exit 1; }
if same "$tmp/planted.1" 2>"$tmp/planted.err"; then
    echo "help_man_test: a planted difference went unnoticed" >&2
    exit 1
fi
echo "help_man_test: a planted difference is caught:"
grep '^[-+][^-+]' "$tmp/planted.err"
exit 0
