#!/usr/bin/env bash
# Issue 29's rule, on the terminal and in the pages: the replay of the
# committed H100 recording and `cuproof compare` of committed sample
# reports show no "1 kernels", no "0 ratio", no CUDA API name with its
# "_v3020" suffix and no time with fewer than two significant digits
# (tests/units_check.pl says how each is found). Their timeline exports
# name the legacy default stream "default stream" and drop the suffixes,
# while the trace data keeps the raw names. First the negative controls:
# the complaints the issue quotes, in text and in a page, must each be
# caught.
#
#   tests/units_test.sh CUPROOF RECORDING.tar.gz SAMPLES_DIR FIXTURES_DIR WORK_DIR
set -euo pipefail
cuproof=$1 recording=$2 samples=$3 fixtures=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
units() { perl "$here/units_check.pl" "$@"; }
rm -rf "$work"
mkdir -p "$work/rec"
fail=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "units_test: ok: $what"; else echo "units_test: FAILED: $what"; fail=1; fi
}
# What units_check.pl reports on FILE (its other arguments before it).
found() { units "$@" || true; }

# ---- negative controls: the issue's complaints are caught ----
cat > "$work/bad.txt" <<'EOF'
[9/21] passed  elementwise-vs-handwritten   GPU 0  source-kernel launch call ms 0.0086 ms
passed  All 1 checks passed. Its essential check, "kernels == 1", measured 1 kernels.
passed  streams-pinned: copy_kernel_overlap_ratio > 0.5  (measured 0 ratio)
refuted (measured 0.84x by CUPTI (0.004 ms against 0.003 ms)).
cudaMemcpyAsync_v3020 took 3 us
EOF
out=$(found "$work/bad.txt")
echo "$out"
check "control: '1 kernels' is caught" grep -q "plural: '1 kernels'" <<< "$out"
check "control: '1 checks' is caught" grep -q "plural: '1 checks'" <<< "$out"
check "control: '0 ratio' is caught" grep -q "ratio: '0 ratio'" <<< "$out"
check "control: '0.004 ms' is caught" grep -q "digits: '0.004 ms'" <<< "$out"
check "control: '3 us' is caught" grep -q "digits: '3 us'" <<< "$out"
check "control: the _v3020 suffix is caught" grep -q "suffix: 'cudaMemcpyAsync_v3020'" <<< "$out"
check "control: a file with them fails" bash -c "! perl '$here/units_check.pl' '$work/bad.txt' > /dev/null"
cat > "$work/bad.html" <<'EOF'
<html><head><style>p { width: 1 s }</style><script>var n = "1 kernels 0.004 ms";</script></head>
<body><p>measured <b>1</b> copies</p><td>0.720729 ratio</td><p>took 0.3&nbsp;ms</p></body></html>
EOF
out=$(found "$work/bad.html")
echo "$out"
check "control (page): '1 copies' across a tag is caught" grep -q "plural: '1 copies'" <<< "$out"
check "control (page): '0.720729 ratio' is caught" grep -q "ratio: '0.720729 ratio'" <<< "$out"
check "control (page): '0.3 ms' is caught" grep -q "digits: '0.3 ms'" <<< "$out"
absent() { ! grep -q "$1" <<< "$2"; } # pattern, text
check "control (page): a script is not visible text" absent "'1 kernels'" "$out"
check "control (page): a style is not visible text" absent "'1 s'" "$out"
# What is left out of the digits rule is only what a recording holds.
printf '{"claims": [{"measured": "0.84x by CUPTI (0.004 ms against 0.003 ms)"}]}\n' \
    > "$work/recorded.json"
check "control: a recorded text is left out of the digits rule" \
    units --recorded "$work/recorded.json" <(sed -n 4p "$work/bad.txt")
check "control: but not the same times written anew" \
    bash -c "! perl '$here/units_check.pl' --recorded '$work/recorded.json' <(echo 'took 0.004 ms against 0.003 ms') > /dev/null"
# --quoted leaves out a source's own words alone, not what cuproof measured.
printf '{"claims": [{"text": "about 200x faster (0.0002 s against 0.058 s)", "measured": "0.84x by CUPTI (0.004 ms against 0.003 ms)"}]}\n' \
    > "$work/quoted.json"
check "control: --quoted leaves a source's words out of the digits rule" \
    units --quoted "$work/quoted.json" <(echo 'claim: about 200x faster (0.0002 s against 0.058 s)')
check "control: but not what was measured" \
    bash -c "! perl '$here/units_check.pl' --quoted '$work/quoted.json' <(sed -n 4p '$work/bad.txt') > /dev/null"
check "control: a time budget is a setting, a time beside it is not" \
    bash -c "perl '$here/units_check.pl' <(echo 'noise under 1% or 2 s have passed') > /dev/null &&
             ! perl '$here/units_check.pl' <(echo 'or 2 s have passed; took 3 s') > /dev/null"

# ---- the samples that this cuproof wrote on the GPU (samples/h100-full) ----
check "sample: the full profile's terminal" \
    units --quoted "$samples/h100-full/report.json" "$samples/h100-full/run-full.log"
check "sample: the full profile's page" \
    units --quoted "$samples/h100-full/report.json" "$samples/h100-full/report.html"

# ---- the replay of the committed recording ----
tar -xzf "$recording" -C "$work/rec"
"$cuproof" replay "$work/rec" --out "$work/out" > "$work/replay.log" 2>&1
check "replay: the terminal" units --recorded "$work/rec/report.json" "$work/replay.log"
check "replay: report.html" units --recorded "$work/rec/report.json" "$work/out/report.html"
# A figure through the one table: no unit repeated in its name, µs below
# 1 ms, three significant digits ("source-kernel launch call 8.67 µs", not
# "... ms 0.0086 ms"), whatever the recording measured.
check "replay: a case's figure in µs, its name without the unit" \
    grep -qE 'elementwise-vs-handwritten .* source-kernel launch call [1-9]\.[0-9]{2} µs$' "$work/replay.log"
check "replay: shares as percentages on the case lines" \
    grep -qE 'queued-64 kernel busy fraction [0-9]{1,3}%$' "$work/replay.log"
check "replay: the page names the GPU a case was recorded on" \
    grep -q '<small>recorded on GPU 0, NVIDIA H100' "$work/out/report.html"
check "replay: the page never names it as if it were here" \
    bash -c "! grep -q '<small>on GPU' '$work/out/report.html'"
# One speedup figure per headline: multi-kernel's is its claim's.
mk=$(grep '^passed  *multi-kernel  ' "$work/replay.log")
check "replay: one speedup figure in multi-kernel's headline" \
    test "$(grep -oE '[0-9.]+ ?(x|×)' <<< "$mk" | grep -vE '^4x$' | wc -l)" -eq 1
# A ratio beside its times can be recomputed from them.
zc=$(grep -oP '(runtime-to-driver|driver-to-runtime) ran \K[0-9.]+× faster than copying \([0-9.]+ µs against [0-9.]+ µs' \
     "$work/replay.log" || true)
check "replay: a headline's ratio is there" test -n "$zc"
if [ -n "$zc" ]; then
    read -r x a b < <(perl -ne '/([\d.]+)× .*\(([\d.]+) µs against ([\d.]+) µs/ and print "$1 $2 $3\n"' <<< "$zc")
    check "replay: ${x}× is ${b} / ${a} to three digits" \
        test "$(perl -e "printf '%.2f', $b / $a")" = "$x"
fi
# Timelines: the legacy default stream by name, API names without their
# suffixes; the trace data keeps the names CUPTI gave.
check "replay: the page names the legacy default stream" \
    grep -q '"GPU 0 ctx 1 default stream"' "$work/out/report.html"
check "replay: the trace data keeps CUPTI's names" grep -q 'cudaMemcpy_v3020' "$work/out/broadcast.trace.json"
check "replay: the timeline exports drop the suffixes" \
    bash -c "! grep -l '\"name\":\"[A-Za-z]*_v[0-9]*\"' '$work/out/'*.perfetto.json"
check "replay: the exports name the legacy default stream" \
    grep -q '"name":"default stream"' "$work/out/multi-kernel.sync.perfetto.json"

# ---- compare of committed sample reports ----
pairs=("$samples/h100-runs/runs-a.report.json $samples/h100-runs/runs-b.report.json"
       "$fixtures/compare-h100-runs/mk-base.runs3.report.json $fixtures/compare-h100-runs/mk-big.runs3.report.json"
       "$samples/h100-full/report.json $work/out/report.json")
k=0
for p in "${pairs[@]}"; do
    k=$((k + 1))
    read -r old new <<< "$p"
    "$cuproof" compare "$old" "$new" --html "$work/compare-$k.html" > "$work/compare-$k.txt" || true
    check "compare $k: the terminal" units --recorded "$old" --recorded "$new" "$work/compare-$k.txt"
    check "compare $k: the page" units --recorded "$old" --recorded "$new" "$work/compare-$k.html"
done
# The ratio beside two times is theirs: new / old of the times shown.
row=$(grep -E '^multi-kernel +streams-pageable ' "$work/compare-1.txt" | head -1)
read -r a ua b ub ratio < <(awk '{print $3, $4, $5, $6, $7}' <<< "$row")
check "compare: the ratio $ratio is $b $ub / $a $ua to three decimals" \
    test "$ua" = "$ub" -a "$(perl -e "printf '%.3f', $b / $a")" = "$ratio"
exit $fail
