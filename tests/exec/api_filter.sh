#!/usr/bin/env bash
# exec.api_filter (issue 30): the API filter and the tracing cost on a GPU.
# streams_overlap runs under cuproof exec in each file form (jsonl, rec),
# with the filter (the default) and with --api all. Every run must meet
# streams_overlap.expect and print its "tracing:" line; then, from each
# report.json:
#   both runs of a form count the same kernels, copies, memsets, pageable
#     copies, graph launches and stream lanes (what two runs share whatever
#     their timing; the findings' equality, which timing moves, is
#     replay_filter's, on recorded traces);
#   every process recorded its cost (records, buffers, post-processing);
#   the filtered run says so (api "filtered", hundreds of call kinds
#     filtered) and recorded fewer API calls than the run with --api all;
#   in the JSON lines, the runtime's device queries (cuDeviceGetAttribute,
#     which no analysis reads) are in the unfiltered file and not in the
#     filtered one: the library applied the filter, not only counted it.
# Skipped (77) where cuproof exec finds no GPU, or python3 cannot read JSON.
#   api_filter.sh CUPROOF PROGRAM EXPECT_FILE OUT_DIR
set -uo pipefail
cuproof=$1 program=$2 expect=$3 out=$4
command -v python3 > /dev/null || { echo "api_filter: skipped: no python3 to read report.json"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || exit 1

for form in jsonl rec; do
    for api in filtered all; do
        run=$form-$api
        "$cuproof" exec --skip-without-gpu --format "$form" --api "$api" --out "$out/$run" \
            --expect-file "$expect" -- "$program" > "$out/$run.log" 2>&1
        rc=$?
        [ "$rc" = 77 ] && { echo "api_filter: skipped: no GPU"; exit 77; }
        if [ "$rc" != 0 ] || ! grep -q '^  tracing: ' "$out/$run.log"; then
            echo "api_filter: $run: cuproof exec exited $rc (0 wanted, with a 'tracing:' line)"
            cat "$out/$run.log"
            exit 1
        fi
        grep '^  tracing: ' "$out/$run.log" | sed "s/^ */$run: /"
    done
done

grep -q '"cuDeviceGetAttribute"' "$out"/jsonl-all/proc/*.proc.jsonl ||
    { echo "api_filter: the run with --api all recorded no cuDeviceGetAttribute"; exit 1; }
if grep -q '"cuDeviceGetAttribute"' "$out"/jsonl-filtered/proc/*.proc.jsonl; then
    echo "api_filter: the filtered run recorded cuDeviceGetAttribute: the filter was not applied"
    exit 1
fi

python3 - "$out" << 'EOF'
import json, sys

out = sys.argv[1]
bad = []
for form in ("jsonl", "rec"):
    runs = {api: json.load(open(f"{out}/{form}-{api}/report.json")) for api in ("filtered", "all")}
    for api, r in runs.items():
        c = r.get("tracing_cost")
        if not c or not c.get("recorded") or c["processes_recorded"] != c["processes"]:
            bad.append(f"{form}-{api}: tracing_cost not recorded by every process: {c}")
            continue
        if c["api"] != api or c["records"] <= 0 or c["buffers"] < 1 or c["postprocess_ms"] <= 0:
            bad.append(f"{form}-{api}: tracing_cost: {c}")
        print(f"{form}-{api}: {c['records']} records, {c['api_records']} API calls, "
              f"{c['api_filtered']} filtered, CUPTI overhead {c['cupti_overhead_ms']:.3f} ms "
              f"({c['overhead_records']} records: {c['cupti_overhead_ms_by_kind']}), "
              f"{c['buffers']} buffers, post-processing {c['postprocess_ms']:.1f} ms")
    if bad:
        continue
    f, a = (runs[k]["tracing_cost"] for k in ("filtered", "all"))
    if f["api_filtered"] < 500 or a["api_filtered"] != 0:
        bad.append(f"{form}: call kinds filtered {f['api_filtered']} (filtered) and {a['api_filtered']} (all)")
    if f["api_records"] >= a["api_records"]:
        bad.append(f"{form}: {f['api_records']} API calls filtered against {a['api_records']} all")
    tf, ta = (runs[k]["cases"][0]["variants"][0]["trace"] for k in ("filtered", "all"))
    for k in ("kernels", "copies", "memsets", "pageable_copies", "graph_launches"):
        if tf[k] != ta[k]:
            bad.append(f"{form}: {k} {tf[k]} filtered against {ta[k]} all")
    if len(tf["streams"]) != len(ta["streams"]):
        bad.append(f"{form}: {len(tf['streams'])} stream lanes filtered against {len(ta['streams'])}")
for b in bad:
    print("api_filter:", b)
sys.exit(1 if bad else 0)
EOF
