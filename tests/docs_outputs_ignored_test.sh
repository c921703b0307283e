#!/usr/bin/env bash
# The folders the docs' shell blocks make in the source tree (README.md
# and docs/*.md: each `--out DIR`, `mkdir -p DIR`, `tar ... -C DIR` and
# `cp -r SRC DIR`, DIR a relative path) are ignored by git, so that a
# reader who follows the walkthrough in a clone is not left with untracked
# files: recording/, replayed/, out/, my-cases/ and the rest.
#
# usage: docs_outputs_ignored_test.sh SOURCE_DIR
# Exit 0 when every such folder is ignored, 1 naming each that is not, 77
# (skipped) where SOURCE_DIR is no git work tree.
set -uo pipefail
src=${1:?usage: docs_outputs_ignored_test.sh SOURCE_DIR}
cd "$src" || exit 2
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || {
    echo "docs_outputs_ignored_test: $src is no git work tree: skipped"
    exit 77
}
outputs=$(for f in README.md docs/*.md; do
    awk '/^```sh/ { b = 1; next } /^```/ { b = 0 } b' "$f" |
        grep -oE '(--out |mkdir -p |-C |cp -r [A-Za-z0-9_./-]+ )[A-Za-z0-9_.-][A-Za-z0-9_./-]*' |
        awk '{ print $NF }'
done | grep -vE '^(/|\$|~)' | sort -u)
[ -n "$outputs" ] || { echo "docs_outputs_ignored_test: no output folder found in the docs" >&2; exit 1; }
bad=0
for d in $outputs; do
    if git check-ignore -q "$d/" || git check-ignore -q "$d"; then
        echo "docs_outputs_ignored_test: $d ignored"
    else
        echo "docs_outputs_ignored_test: $d, made by a docs block, is not in .gitignore" >&2
        bad=1
    fi
done
exit $bad
