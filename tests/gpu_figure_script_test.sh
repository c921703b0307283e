#!/bin/bash
# ci/gpu-figure.py, the check behind gpu.the_judged_figure_agrees_with_cupti,
# on recorded H200 reports (samples/h200-gpu-time), so that each of its
# verdicts is shown able to fail on the CPU: the recorded check passes; an
# own busy figure and an events figure each moved 10% from CUPTI's are
# named and exit 1; a gated run without a recognised gate kernel is
# named; a report without the timed runs' own busy time (the
# first recording) is "not checked", exit 2, never passed. And the script's
# reading of the figure rule (which variants are judged on their own busy
# time) is compare's own (cp_variant_judged_on_busy) on the same report.
#
# usage: gpu_figure_script_test.sh SOURCE_DIR CUPROOF
set -u
src=$1 cuproof=$2
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
s=$src/samples/h200-gpu-time
fig=$src/ci/gpu-figure.py
fail=0
expect() { # WANT-RC LABEL PATTERN FILE
    local got=$4
    if [ "$(cat "$got.rc")" != "$1" ] || ! grep -q -- "$3" "$got"; then
        echo "FAIL: $2: exit $(cat "$got.rc") (want $1), or no '$3' in:"
        cat "$got"
        fail=1
    else
        echo "ok: $2"
    fi
}
run() { python3 "$fig" "$1" > "$2" 2>&1; echo $? > "$2.rc"; }

run "$s/figure-check-4.json.gz" "$tmp/ok"
expect 0 "the recorded check" "within 5% (or 0.5 us) of CUPTI's: 35 of 35" "$tmp/ok"

# One series of one variant times 1.10, written back.
moved() { # CASE VARIANT SERIES OUT
    python3 - "$s/figure-check-4.json.gz" "$1" "$2" "$3" "$4" <<'PY'
import gzip, json, sys
src, case, variant, series, out = sys.argv[1:]
r = json.load(gzip.open(src, "rt"))
for c in r["cases"]:
    for v in c["variants"]:
        if c["name"] == case and v["name"] == variant:
            for x in v["series"]:
                if x["name"] == series:
                    x["values"] = [1.10 * y for y in x["values"]]
json.dump(r, open(out, "w"))
PY
}
moved indexing centre timed_cupti_own_ms "$tmp/own.json"
run "$tmp/own.json" "$tmp/own"
expect 1 "an own busy figure 10% from CUPTI's" "off: indexing centre" "$tmp/own"
moved conway-streams queued-16 timed_gpu_ms "$tmp/events.json"
run "$tmp/events.json" "$tmp/events"
expect 1 "an events figure 10% from CUPTI's" "off: conway-streams queued-16" "$tmp/events"
# A gated variant whose runs recognised no gate kernel is named so.
python3 - "$s/figure-check-4.json.gz" "$tmp/nogate.json" <<'PY'
import gzip, json, sys
r = json.load(gzip.open(sys.argv[1], "rt"))
for c in r["cases"]:
    for v in c["variants"]:
        if c["name"] == "conway-streams" and v["name"] == "queued-4":
            n = len(v["timing"]["gpu_samples_ms"])
            v["series"].append({"name": "timed_cupti_gates", "unit": "count",
                                "values": [1] * (n - 2) + [0, 0]})
json.dump(r, open(sys.argv[2], "w"))
PY
run "$tmp/nogate.json" "$tmp/nogate"
expect 0 "a gate not recognised is named" "queued-4 .*no gate kernel recognised in 2 of" "$tmp/nogate"
run "$s/first/figure.json.gz" "$tmp/old"
expect 2 "no timed own busy time" "not checked" "$tmp/old"

# The rule written twice, held to one answer: compare's by_busy variants
# (the report against itself) are the script's "busy" rows.
gzip -dc "$s/figure-check-4.json.gz" > "$tmp/r.json"
"$cuproof" compare "$tmp/r.json" "$tmp/r.json" --format json > "$tmp/cmp.json" 2>/dev/null
python3 - "$tmp/cmp.json" "$tmp/ok" <<'PY' > "$tmp/rule" 2>&1
import json, sys
c = json.load(open(sys.argv[1]))
by_compare = sorted(f"{v['case']} {v['variant']}" for v in c["variants"]
                    if v.get("judged_on") == "gpu_busy_time")
by_script = sorted(" ".join(l.split()[:2]) for l in open(sys.argv[2])
                   if len(l.split()) > 3 and "busy" in l.split()[2:4])
print("compare:", by_compare)
print("script: ", by_script)
sys.exit(0 if by_compare == by_script and by_compare else 1)
PY
echo $? > "$tmp/rule.rc"
expect 0 "the script's figure rule is compare's" "compare:" "$tmp/rule"
exit $fail
