#!/usr/bin/env bash
# The timelines in a real browser: cuproof timeline draws recorded H100
# traces into a page, headless Chromium loads it and dumps the DOM after
# the scripts ran, and this checks that every timeline was drawn with all
# its lanes and items and that no script error was logged. A screenshot is
# left in OUT_DIR as an artifact.
#
# Then the committed H100 sample report (SAMPLE_HTML) must draw every one
# of its timelines too: it is what a visitor opens first.
#
#   tests/browser_test.sh CUPROOF FIXTURES_DIR OUT_DIR SAMPLE_HTML
set -euo pipefail
cuproof=$1 fixtures=$2 out=$3 sample=$4
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
if grep -q "Uncaught" "$out/chromium.log"; then
    echo "browser_test: the console logged an uncaught error" >&2
    fail=1
fi
exit $fail
