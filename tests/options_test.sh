#!/usr/bin/env bash
# Each command's options are one list: its option table in cli/options.c,
# which the help prints and the parser reads (cp_arg_next, cli/args.c; `cuproof help
# --options` prints the tables as the parsers read them). Checked two ways:
#  - in the sources: every flag a command's parser compares
#    (strcmp(opt, "--flag")) is in that command's table, and every flag of
#    its table has such a branch;
#  - on the binary: every flag of every table is taken by its command
#    (never "unknown option", never "no parser takes it"), and a flag in
#    no table is refused by each command as unknown.
# usage: options_test.sh SOURCE_DIR CUPROOF
# Exit 0 when every rule holds; 1 with one line per broken rule.
set -uo pipefail
src=$1
cuproof=$(readlink -f "$2")
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cuproof" help --options > "$tmp/table" || { echo "options: help --options failed" >&2; exit 1; }
[ -s "$tmp/table" ] || { echo "options: help --options printed no table" >&2; exit 1; }

# parser COMMAND: the file whose parser reads COMMAND's table.
parser() {
    case $1 in
    run | test) echo "$src/cli/cmd_run.c" ;;
    *) echo "$src/cli/cmd_$1.c" ;;
    esac
}

# The flags each parser compares, against the tables of its commands.
for cmd in $(cut -f1 "$tmp/table" | sort -u); do
    file=$(parser "$cmd")
    [ -f "$file" ] || { echo "options: $cmd has a table but no parser file $file" >&2; bad=1; continue; }
    grep -oE 'strcmp\((opt|flag|g\.opt), "--[a-z][a-z0-9-]*"\)' "$file" |
        sed -E 's/.*"(--[^"]*)".*/\1/' | sort -u > "$tmp/parsed.$cmd"
    awk -F'\t' -v c="$cmd" '$1 == c {print $2}' "$tmp/table" | sort -u > "$tmp/listed.$cmd"
    # A flag the table lists that the parser has no branch for.
    for f in $(comm -23 "$tmp/listed.$cmd" "$tmp/parsed.$cmd"); do
        echo "options: $cmd's table lists $f, but $(basename "$file") has no branch for it" >&2
        bad=1
    done
done
# A flag a parser compares that none of its commands' tables lists (run
# and test share cmd_run.c: a flag of either table will do there).
for file in "$src"/cli/cmd_*.c; do
    cmds=$(basename "$file" .c | sed 's/^cmd_//')
    [ "$cmds" = run ] && cmds="run test"
    listed=$(for c in $cmds; do cat "$tmp/listed.$c" 2>/dev/null; done | sort -u)
    for f in $(grep -oE 'strcmp\((opt|flag|g\.opt), "--[a-z][a-z0-9-]*"\)' "$file" |
        sed -E 's/.*"(--[^"]*)".*/\1/' | sort -u); do
        if ! grep -qxF -- "$f" <<<"$listed"; then
            echo "options: $(basename "$file") parses $f, which is in no option table of" \
                "$cmds (cli/options.c): its help does not show it and cp_arg_next refuses it" >&2
            bad=1
        fi
    done
done

# On the binary, in a scratch directory (ab may make its output folder
# before it finds no build): each flag with a value of "1", between
# arguments that make the command stop with a usage or input error once
# the flag is parsed, so that nothing runs.
cd "$tmp" || exit 1
while IFS=$'\t' read -r cmd flag value _; do
    before="" after=""
    case $cmd in
    run | test) after=no-such-case ;;
    ab) before="/nonexistent/a /nonexistent/b" ;;
    gpus | metrics) after=extra ;;
    esac
    val=""
    [ "$value" = value ] && val=1
    # shellcheck disable=SC2086
    out=$(timeout 60 "$cuproof" $cmd $before "$flag" $val $after 2>&1 < /dev/null)
    if grep -qE "unknown option|no parser takes it" <<<"$out"; then
        echo "options: cuproof $cmd does not take $flag, which its table lists: $out" >&2
        bad=1
    fi
done < "$tmp/table"
# The control: a flag in no table is unknown to every command that has one.
for cmd in $(cut -f1 "$tmp/table" | sort -u); do
    before=""
    [ "$cmd" = ab ] && before="/nonexistent/a /nonexistent/b"
    # shellcheck disable=SC2086
    out=$(timeout 60 "$cuproof" $cmd $before --no-such-option 2>&1 < /dev/null)
    if ! grep -q "unknown option '--no-such-option'" <<<"$out"; then
        echo "options: cuproof $cmd took --no-such-option, which no table lists: $out" >&2
        bad=1
    fi
done
exit $bad
