#!/usr/bin/env perl
# The one table of units and names (include/cuproof/units.h, issue 29),
# checked on what a person reads: terminal text, or an HTML page's visible
# text (a FILE ending in .html: scripts, styles and tags left out). Prints
# every phrase that breaks a rule and exits 1 if there is one:
#   plural    a count of one with a plural unit ("1 kernels", "1 checks")
#   ratio     a share written as a unit ("0 ratio", "0.2923 ratio")
#   suffix    a CUDA API name with CUPTI's version suffix (cudaMemcpy_v3020)
#   digits    a nonzero time shown with fewer than two significant digits
#             ("0.004 ms", "3 us")
# What a replay keeps as recorded was written by the cuproof of the GPU
# run, not by this one: with --recorded REPORT.json, the claims' and
# checks' recorded "measured" and "reason" texts, the claims' own words
# ("text", "claimed": a source quoted), and every quotation
# ("..."), are left out of the digits rule (a source's own "0.0002 s", a
# recording's "0.004 ms"); every other rule still applies to them. With
# --quoted REPORT.json only the claims' own words are left out: for a page
# that this cuproof wrote, where everything else is its own. Two settings
# are exact values, not rounded measurements, and are left out too: a
# check's tolerance "t = 0.1 ms" and the time budget ("or 2 s have
# passed", "or 1 s pass").
#
#   tests/units_check.pl [--recorded REPORT.json] [--quoted REPORT.json] FILE...
use strict;
use warnings;
use utf8;
use open qw(:std :encoding(UTF-8));

my @recorded;
while (@ARGV && $ARGV[0] =~ /^--/) {
    my $opt = shift @ARGV;
    if ($opt eq '--recorded' || $opt eq '--quoted') {
        my $json = shift @ARGV;
        my $fields = $opt eq '--recorded' ? 'measured|reason|text|claimed' : 'text|claimed';
        open my $fh, '<', $json or die "units_check: $json: $!\n";
        local $/;
        my $s = <$fh>;
        while ($s =~ /"(?:$fields)":\s*"((?:[^"\\]|\\.)*)"/g) {
            my $v = $1;
            $v =~ s/\\u([0-9a-fA-F]{4})/chr(hex $1)/ge;
            $v =~ s/\\(.)/$1/g;
            # Only texts that show a time: a short value ("8") would
            # take digits out of everything else.
            push @recorded, $v if length($v) > 8 && $v =~ /\d ?(?:ns|us|µs|ms|s)\b/;
        }
    } else {
        die "units_check: unknown option $opt\n";
    }
}
die "usage: units_check.pl [--recorded REPORT.json] [--quoted REPORT.json] FILE...\n" unless @ARGV;

my $plural_units = join '|', qw(kernels copies memsets gaps devices ranks hosts launches
                                collectives nodes pixels checks variants cases claims records
                                values lanes
                                contexts streams threads processes samples passes buffers);
my $bad = 0;
for my $file (@ARGV) {
    open my $fh, '<', $file or die "units_check: $file: $!\n";
    my $text = do { local $/; <$fh> };
    if ($file =~ /\.html$/) {
        $text =~ s/<script.*?<\/script>//gs;
        $text =~ s/<style.*?<\/style>//gs;
        $text =~ s/<[^>]*>/ /g;
        my %ent = (amp => '&', lt => '<', gt => '>', quot => '"', rarr => '→', times => '×',
                   micro => 'µ', hellip => '…', nbsp => ' ', ndash => '–', mdash => '—');
        $text =~ s/&#(\d+);/chr($1)/ge;
        $text =~ s/&#x([0-9a-fA-F]+);/chr(hex $1)/ge;
        $text =~ s/&([a-z]+);/exists $ent{$1} ? $ent{$1} : ' '/ge;
        $text =~ s/[ \t]+/ /g; # "<b>1</b> copies" reads "1 copies"
    }
    my @found;
    while ($text =~ /(?<![\d.\/])(1 (?:$plural_units))(?![\w-])/g) {
        push @found, "plural: '$1'";
    }
    while ($text =~ /(\S+ ratio)\b/g) {
        my $m = $1;
        push @found, "ratio: '$m'" if $m =~ /^[\d.]+ ratio$/;
    }
    while ($text =~ /\b(\w+_v\d+)\b/g) {
        push @found, "suffix: '$1'";
    }
    # The digits rule on the text less what it leaves out.
    my $own = $text;
    for my $r (@recorded) {
        $own =~ s/\Q$r\E/ /g;
    }
    $own =~ s/"[^"\n]*"/ /g;
    $own =~ s/t = 0\.1 ms|or \d+ s (?:have passed|pass)\b/ /g;
    while ($own =~ /(?<![\w.])(\d+(?:\.\d+)?) ?(ns|us|µs|ms|s)(?![\w])/g) {
        my ($num, $unit) = ($1, $2);
        next if $num == 0;
        (my $digits = $num) =~ s/\.//;
        $digits =~ s/^0+//;
        if (length($digits) < 2) {
            my $at = pos($own);
            my $context = substr($own, $at - length($num) - 30 < 0 ? 0 : $at - length($num) - 30,
                                 40 + length($num));
            $context =~ s/\s+/ /g;
            push @found, "digits: '$num $unit' in '...$context...'";
        }
    }
    for my $f (@found) {
        print "units_check: $file: $f\n";
        $bad = 1;
    }
    print "units_check: $file: ok\n" unless @found;
}
exit $bad;
