#!/usr/bin/env bash
# The timelines in a real browser: cuproof timeline draws recorded H100
# traces into a page, headless Chromium loads it and dumps the DOM after
# the scripts ran, and this checks that every timeline was drawn with all
# its lanes and items and that no script error was logged. A screenshot is
# left in OUT_DIR as an artifact.
#
# Then the committed H100 sample report (SAMPLE_HTML) must draw every one
# of its timelines too: it is what a visitor opens first. Then four pages a
# person reads, from the DOM after their scripts ran: the sample, the
# replay of the committed recording (RECORDING), a report of `cuproof exec`
# (a fake program hands in a process trace recorded on the H100) and a
# compare page: every case has a headline, no metric identifier or
# `_ms`/`_ns` name is visible text, every timeline drew coloured pixels,
# and the verdict counts on the page are report.json's; the replay, exec
# and compare pages keep issue 29's one table of units and names
# (tests/units_check.pl). Screenshots of the
# sample's top and of one case are left in OUT_DIR.
#
# The replay's page leads with its findings: the key findings end within
# the first screen (1400 x 1000), each is a line that links to its case,
# and the page is at most half the height the code before them drew.
#
# Last, with ANALYSIS_BENCH (ci/bench/analysis.c), a timeline of a million
# synthetic records: the page embeds their summary, not the records; it
# must draw it, and the time by which it was first drawn is reported
# (first-paint.txt in OUT_DIR; a measurement, not a pass condition).
#
#   tests/browser_test.sh CUPROOF FIXTURES_DIR OUT_DIR SAMPLE_HTML RECORDING [ANALYSIS_BENCH]
set -euo pipefail
cuproof=$1 fixtures=$2 out=$3 sample=$4 recording=$5 bench=${6:-}
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "browser_test: no chromium (ci/install-deps.sh installs Debian's chromium)" >&2
    exit 1
fi
traces=("$fixtures/multi-kernel-h100.trace.json" "$fixtures/host-threads-h100.trace.json"
        "$fixtures/conway-streams-h100-ci.trace.json")
"$cuproof" timeline "$out/timelines.html" "${traces[@]}"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$profile" --window-size=1400,2400
       --virtual-time-budget=10000)
timeout 180 "$browser" "${flags[@]}" --dump-dom "file://$out/timelines.html" \
    > "$out/dom.html" 2> "$out/chromium.log"
timeout 180 "$browser" "${flags[@]}" --screenshot="$out/timelines.png" \
    "file://$out/timelines.html" >> "$out/chromium.log" 2>&1 || true

fail=0
expect() { # description, actual, wanted
    if [ "$2" != "$3" ]; then
        echo "browser_test: $1: got '$2', wanted '$3'" >&2
        fail=1
    else
        echo "browser_test: $1: $2"
    fi
}
blocks=$(grep -o 'class="timeline-data"' "$out/timelines.html" | wc -l)
drawn=$(grep -o 'class="timeline drawn"' "$out/dom.html" | wc -l)
expect "timelines in the page" "$blocks" 32
expect "timelines drawn" "$drawn" "$blocks"
expect "script errors" "$(grep -o 'data-script-errors="[0-9]*"' "$out/dom.html")" \
    'data-script-errors="0"'
# The lanes and items each drawn timeline reports, against the data: the
# streams-pinned variant of multi-kernel has 200 streams plus NVTX, and
# contexts-32 of host-threads 32 lanes plus NVTX.
lanes=$(grep -o 'id="tl-multi-kernel-streams-pinned" data-lanes="[0-9]*"' "$out/dom.html" |
        grep -o '[0-9]*"$' | tr -d '"')
expect "multi-kernel streams-pinned lanes" "$lanes" 201
lanes=$(grep -o 'id="tl-host-threads-contexts-32" data-lanes="[0-9]*"' "$out/dom.html" |
        grep -o '[0-9]*"$' | tr -d '"')
expect "host-threads contexts-32 lanes" "$lanes" 33

# The sample report, as committed: every timeline drawn, no script error,
# multi-kernel's sync variant on one stream and streams-pinned on 200.
timeout 180 "$browser" "${flags[@]}" --dump-dom "file://$sample" > "$out/sample-dom.html" \
    2>> "$out/chromium.log"
blocks=$(grep -o 'class="timeline-data"' "$sample" | wc -l)
drawn=$(grep -o 'class="timeline drawn"' "$out/sample-dom.html" | wc -l)
expect "sample report: timelines drawn" "$drawn" "$blocks"
expect "sample report: script errors" \
    "$(grep -o 'data-script-errors="[0-9]*"' "$out/sample-dom.html")" 'data-script-errors="0"'
for v in sync:2 streams-pinned:201; do
    lanes=$(grep -o "id=\"tl-multi-kernel-${v%%:*}\" data-lanes=\"[0-9]*\"" "$out/sample-dom.html" |
            grep -o '[0-9]*"$' | tr -d '"')
    expect "sample report: multi-kernel ${v%%:*} lanes (with NVTX)" "$lanes" "${v##*:}"
done
# ---- the pages people read ----

# Metric and finding names with an underscore (one-word ones are words).
identifiers=$("$cuproof" metrics | awk 'NF && $1 ~ /_/ {print $1}' | paste -sd'|')
visible_text() { # the DOM's text, scripts and styles left out
    perl -0pe 's/<script.*?<\/script>//gs; s/<style.*?<\/style>//gs; s/<title>.*?<\/title>//gs;
              s/<[^>]*>/ /g; s/&[a-z]+;/ /g' "$1"
}
page() { # name, page.html, report.json or "" (a compare page has no cases)
    local name=$1 html=$2 json=$3 dom="$out/$1-dom.html"
    timeout 180 "$browser" "${flags[@]}" --dump-dom "file://$html" > "$dom" 2>> "$out/chromium.log"
    expect "$name: script errors" "$(grep -o 'data-script-errors="[0-9]*"' "$dom" || echo none)" \
        "$(grep -q 'timeline-data' "$html" && echo 'data-script-errors="0"' || echo none)"
    local found
    found=$(visible_text "$dom" | grep -oE "\b(${identifiers})\b|\b[A-Za-z0-9]+(_[A-Za-z0-9]+)*_(ms|ns|us)\b" |
            sort -u | paste -sd' ' || true)
    expect "$name: identifiers in the visible text" "$found" ""
    local blocks drawn blank
    # grep finds nothing in some pages: a count of 0, not a failed pipe.
    blocks=$({ grep -o 'class="timeline-data"' "$html" || true; } | wc -l)
    drawn=$({ grep -o 'class="timeline drawn"' "$dom" || true; } | wc -l)
    blank=$({ grep -o 'data-ink="0"' "$dom" || true; } | wc -l)
    expect "$name: timelines drawn" "$drawn" "$blocks"
    expect "$name: timelines without a coloured pixel" "$blank" 0
    expect "$name: timelines that counted their pixels" \
        "$({ grep -o 'data-ink="[0-9]*"' "$dom" || true; } | wc -l)" "$blocks"
    [ -n "$json" ] || return 0
    local sections headlines
    sections=$({ grep -o '<section id="case-' "$dom" || true; } | wc -l)
    headlines=$({ grep -o '<p class="headline ' "$dom" || true; } | wc -l)
    expect "$name: cases with a headline" "$headlines" "$sections"
    for st in passed failed inconclusive skipped; do
        # A case's status is the only one at three tabs' depth in cJSON's print.
        expect "$name: $st cases" \
            "$({ grep -o "data-$st=\"[0-9]*\"" "$dom" || true; } | grep -o '[0-9]*')" \
            "$(grep -cP "^\t\t\t\"status\":\t\"$st\"" "$json" || true)"
    done
}
page sample "$sample" "$(dirname "$sample")/report.json"

# Issue 29's one table of units and names in a page's text after its
# scripts ran (tests/units_check.pl: no "1 kernels", "0 ratio", "_v3020"
# or time with fewer than two significant digits; tests/units_test.sh
# shows each rule failing on the issue's complaints). Not on the sample,
# which an older cuproof wrote and is kept as it was.
here=$(cd "$(dirname "$0")" && pwd)
units_rule() { # name, then units_check.pl's arguments (the DOM last)
    local name=$1 report
    shift
    if report=$(perl "$here/units_check.pl" "$@" 2>&1); then
        echo "browser_test: $name: units and names: ok"
    else
        echo "$report" >&2
        echo "browser_test: $name: units and names: broken" >&2
        fail=1
    fi
}
units_rule timelines "$out/dom.html"

rm -rf "$out/replay" && mkdir -p "$out/replay/recording"
tar -xzf "$recording" -C "$out/replay/recording"
"$cuproof" replay "$out/replay/recording" --out "$out/replay" > "$out/replay.log"
page replay "$out/replay/report.html" "$out/replay/report.json"
units_rule replay --recorded "$out/replay/recording/report.json" "$out/replay-dom.html"
grep -q "Replayed from a recording on NVIDIA H100 80GB HBM3" "$out/replay-dom.html" ||
    { echo "browser_test: the replay is not labelled as one" >&2; fail=1; }

# The replay leads with its findings, in a first screen of 1400 x 1000:
# the page's script stamps <body> with where the key findings end and the
# page's height once every timeline is drawn. The findings must end within
# the first 1000 px, hold a line per finding that links to a case of the
# page, and the page must be at most half as tall as before report.html
# led with its findings.
# REPLAY_HEIGHT_BEFORE: document.documentElement.scrollHeight of this
# replay's report.html at 1400 px wide as commit b4f3a19 wrote it (every
# case's checks and timelines open, in the run's order), measured in this
# headless Chromium by a script appended to the page; the committed H100
# sample (samples/h100-full/report.html, same code) measured 80907.
# Measured again for each new recording: 59379 for that of 2026-11-24,
# 59422 for that of 2026-11-26T05:19 (b4f3a19 built, its two "exceeded"
# claims shown as "refuted", the verdicts b4f3a19 knows; this page 29686
# px), 59551 for that of 2026-11-26T06:12, whose event-timing claim is
# measured in ci and explained (this page 29815 px, half and 40 px more,
# until a claim's explanation showed its first sentence and folded the
# rest under "more": 29473 px).
REPLAY_HEIGHT_BEFORE=59551
timeout 180 "$browser" "${flags[@]}" --window-size=1400,1000 --dump-dom \
    "file://$out/replay/report.html" > "$out/replay-screen-dom.html" 2>> "$out/chromium.log"
attr() { # the number in NAME="N" on the page's <body>, or "none"
    grep -o "$1=\"[0-9]*\"" "$2" | head -1 | grep -o '[0-9]*' || echo none
}
height=$(attr data-page-height "$out/replay-screen-dom.html")
bottom=$(attr data-key-findings-bottom "$out/replay-screen-dom.html")
echo "browser_test: replay: page $height px tall (before: $REPLAY_HEIGHT_BEFORE), key findings end at $bottom px"
expect "replay: page at most half as tall as before" \
    "$([ "$height" != none ] && [ $((2 * height)) -le $REPLAY_HEIGHT_BEFORE ] && echo yes || echo no)" yes
expect "replay: key findings within the first screen" \
    "$([ "$bottom" != none ] && [ "$bottom" -lt 1000 ] && echo yes || echo no)" yes
findings=$(perl -0ne 'print $1 if /<section id="key-findings">(.*?)<\/section>/s' \
           "$out/replay-screen-dom.html")
items=$({ grep -o '<li[ >]' <<< "$findings" || true; } | wc -l)
targets=$({ grep -oP '<li[^>]*><a href="#\K[^"]+' <<< "$findings" || true; } | sort -u)
linked=$({ grep -oP '<li[^>]*><a href="#case-' <<< "$findings" || true; } | wc -l)
missing=$(for t in $targets; do grep -q "id=\"$t\"" "$out/replay-screen-dom.html" || echo "$t"; done)
expect "replay: key findings (some)" "$([ "$items" -gt 0 ] && echo yes || echo no)" yes
expect "replay: key findings that start with a link to their case" "$linked" "$items"
expect "replay: links to cases not on the page" "$missing" ""

rm -rf "$out/exec"
"$cuproof" exec --expect 'peak_concurrent_kernels > 1' --expect 'no finding cuda_memcpy_async' \
    --out "$out/exec" -- sh -c "cp '$fixtures/exec-h100/streams-graph-nvtx.proc.jsonl' \
    \"\$CUPROOF_EXEC_DIR/fake.1.proc.jsonl\"" > "$out/exec.log"
page exec "$out/exec/report.html" "$out/exec/report.json"
units_rule exec "$out/exec-dom.html"

"$cuproof" compare "$fixtures/compare-h100/mk-base2.report.json" \
    "$fixtures/compare-h100/mk-big.report.json" --html "$out/compare.html" > "$out/compare.log" || true
page compare "$out/compare.html" ""
units_rule compare --recorded "$fixtures/compare-h100/mk-base2.report.json" \
    --recorded "$fixtures/compare-h100/mk-big.report.json" "$out/compare-dom.html"

# Screenshots beside the sample: its top, and multi-kernel's section.
timeout 180 "$browser" "${flags[@]}" --window-size=1400,1000 --screenshot="$out/report-top.png" \
    "file://$sample" >> "$out/chromium.log" 2>&1 || true
perl -0pe 's/<h1>cuproof report<\/h1>.*?(<section id="case-multi-kernel")/$1/s' "$sample" \
    > "$out/one-case.html"
timeout 180 "$browser" "${flags[@]}" --window-size=1400,1400 --screenshot="$out/report-case.png" \
    "file://$out/one-case.html" >> "$out/chromium.log" 2>&1 || true

if [ -n "$bench" ]; then
    "$bench" 1000000 "$out/big.json" "$out/big.trace.json" > /dev/null
    "$cuproof" timeline "$out/big.html" "$out/big.trace.json" > /dev/null
    rm -f "$out/big.trace.json"
    # No virtual time here: the page's clock must be the real one.
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
        --window-size=1400,2400 --dump-dom "file://$out/big.html" > "$out/big-dom.html" \
        2>> "$out/chromium.log"
    expect "1M records: script errors" \
        "$(grep -o 'data-script-errors="[0-9]*"' "$out/big-dom.html")" 'data-script-errors="0"'
    tag=$(grep -o 'class="timeline drawn"[^>]*' "$out/big-dom.html" || true)
    expect "1M records: items the summary stands for" \
        "$(grep -o 'data-items="[0-9]*"' <<< "$tag" | grep -o '[0-9]*')" 1000000
    cells=$(grep -o 'data-summary="[0-9]*"' <<< "$tag" | grep -o '[0-9]*' || echo 0)
    ink=$(grep -o 'data-ink="[0-9]*"' <<< "$tag" | grep -o '[0-9]*' || echo 0)
    if [ "${cells:-0}" -gt 0 ] && [ "${ink:-0}" -gt 0 ]; then
        echo "browser_test: 1M records: summary of $cells cells drawn, $ink coloured pixels"
    else
        echo "browser_test: 1M records: summary not drawn (cells '$cells', ink '$ink')" >&2
        fail=1
    fi
    paint=$(grep -o 'data-first-paint-ms="[0-9]*"' "$out/big-dom.html" | grep -o '[0-9]*' || true)
    echo "1M records: page $(du -k "$out/big.html" | cut -f1) kB, first paint ${paint:-?} ms" \
        | tee "$out/first-paint.txt"
fi

if grep -q "Uncaught" "$out/chromium.log"; then
    echo "browser_test: the console logged an uncaught error" >&2
    fail=1
fi
exit $fail
