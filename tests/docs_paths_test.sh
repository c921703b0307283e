#!/usr/bin/env bash
# Every repository path the docs and the source comments name exists
# (docs/testing.md, "The docs test"):
#
#   - README.md and docs/*.md: every word that starts with a top-level
#     folder (harness/ reports/ cli/ include/ tests/ ci/ cases/ kernels/
#     docs/ samples/ cmake/ examples/), and every relative link, resolved
#     from the page's folder;
#   - comments of *.c *.h *.cu *.cmake *.sh and CMakeLists.txt (/* */ and //
#     in C and CUDA, # in shell and CMake): every word that starts with a
#     top-level folder.
#
# A word with a glob (tests/fixtures/*.json) must match something; one with
# a placeholder in capitals (cases/NAME.c, tests/fixtures/CASE-h100-ci.trace.json) is a
# pattern, not a path, and is left alone. Each missing path is printed as
# file:line: path.
#
# usage: docs_paths_test.sh SOURCE_DIR [FILE...]
# With no FILE, the tracked files of SOURCE_DIR (git ls-files, else a walk
# that skips build*/ and dot folders). Exit 0 when every path exists, else 1.
set -uo pipefail
[ $# -ge 1 ] || {
    echo "usage: docs_paths_test.sh SOURCE_DIR [FILE...]" >&2
    exit 2
}
src=$(cd "$1" && pwd)
shift
cd "$src" || exit 2
if [ $# -gt 0 ]; then
    files=("$@")
elif git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard |
        grep -E '(^README\.md$|^docs/[^/]+\.md$|\.(c|h|cu|cmake|sh)$|(^|/)CMakeLists\.txt$)')
else
    mapfile -t files < <(find . \( -name 'build*' -o -name '.*' ! -name . \) -prune -o -type f -print |
        sed 's#^\./##' |
        grep -E '(^README\.md$|^docs/[^/]+\.md$|\.(c|h|cu|cmake|sh)$|(^|/)CMakeLists\.txt$)')
fi

# Nothing is pending: docs/cli.md is committed (help.docs_cli_md_is_current
# holds it to the --help source). The pattern stays for a page named
# before it is written, which must then be listed here with why.
pending='^$'

perl -e '
use strict; use warnings;
my $pending = shift @ARGV;
my $top = qr{(?:harness|reports|cli|include|tests|ci|cases|kernels|docs|samples|cmake|examples)/};
my $missing = 0; my $seen = 0;

sub exists_path {
    my ($p) = @_;
    return 1 if -e $p;
    if ($p =~ /[*?\[]/) { my @m = glob($p); return scalar(@m) > 0; }
    return 0;
}
sub placeholder { my ($p) = @_; (my $q = $p) =~ s{(^|/)(README|DESIGN|KINDS)\.md$}{}; return $q =~ m{(^|[/.\-])[A-Z][A-Z0-9_]+([/.\-]|$)}; }
# $as_written: the path as the page or comment wrote it, which alone may
# hold a placeholder; a link resolved from the folder of its page may not
# be judged by the name of that folder (random capitals of a temporary
# directory).
sub report {
    my ($file, $line, $p, $as_written) = @_;
    $as_written //= $p;
    return if $p =~ $pending;
    $seen++;
    return if exists_path($p) || placeholder($as_written);
    print "$file:$line: $p\n"; $missing++;
}
sub words {
    my ($file, $line, $text) = @_;
    $text =~ s{(?<![A-Za-z0-9_./])\./}{}g;
    while ($text =~ m{(?<![A-Za-z0-9_./\$\}\-\@~])($top[A-Za-z0-9_.*/\-\[\]]*)}g) {
        my $p = $1;
        $p =~ s/[.\]]+$//;
        $p =~ s{\[\d+\]$}{};
        report($file, $line, $p);
    }
}
for my $file (@ARGV) {
    open(my $fh, "<", $file) or do { print "$file: cannot be read\n"; $missing++; next };
    my $md = $file =~ /\.md$/;
    my $clike = $file =~ /\.(c|h|cu)$/;
    my $in = 0; my $n = 0;
    (my $dir = $file) =~ s{[^/]*$}{};
    while (my $l = <$fh>) {
        $n++;
        if ($md) {
            words($file, $n, $l);
            while ($l =~ m{\]\(([^)\s]+)\)}g) {
                my $link = $1;
                next if $link =~ m{^(https?:|mailto:|#)};
                $link =~ s/#.*$//;
                next if $link eq "";
                my $p = $dir . $link;
                1 while $p =~ s{(^|/)(?!\.\./)[^/]+/\.\./}{$1};
                $p =~ s{^\./}{};
                report($file, $n, $p, $link);
            }
        } elsif ($clike) {
            my $c = "";
            my $rest = $l;
            while (length $rest) {
                if ($in) {
                    if ($rest =~ s{^(.*?)\*/}{}s) { $c .= " $1"; $in = 0; }
                    else { $c .= " $rest"; $rest = ""; }
                } elsif ($rest =~ s{^.*?(/\*|//|")}{}s) {
                    if ($1 eq "/*") { $in = 1; }
                    elsif ($1 eq "//") { $c .= " $rest"; $rest = ""; }
                    else { $rest =~ s{^(?:[^"\\]|\\.)*"}{}s or $rest = ""; }
                } else { $rest = ""; }
            }
            words($file, $n, $c) if length $c;
        } else {
            # shell and CMake: from a # that starts a comment to the line end
            if ($l =~ m/(?:^|\s)#(?![!{])(.*)$/) { words($file, $n, $1); }
        }
    }
    close $fh;
}
print "docs_paths: $seen paths named in ", scalar(@ARGV), " files, $missing missing\n";
exit($missing ? 1 : 0);
' "$pending" "${files[@]}"
