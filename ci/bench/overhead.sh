#!/usr/bin/env bash
# Tracing overhead on the GPU: multi-kernel in the full profile, RUNS
# times (default 3) in fresh processes, each with 10 untraced timed runs
# per variant and one traced run. For each variant the traced run's span
# (first to last device activity) is set against the untraced median wall
# time; the budget is at most 5% longer for streams-pinned. Writes
# OUT_DIR/overhead.json and exits 1 over budget.
#
#   ci/bench/overhead.sh [OUT_DIR]   (a built build/default is needed)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/bench-out/overhead}" && cd "${1:-$root/bench-out/overhead}" && pwd)
cd "$root"
runs=${CUPROOF_OVERHEAD_RUNS:-3}
for i in $(seq 1 "$runs"); do
    ./build/default/cuproof run multi-kernel --profile full --repeat 10 --out "$out/run-$i" \
        > "$out/run-$i.log" 2>&1 || { echo "overhead: run $i failed"; cat "$out/run-$i.log"; }
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
ratios = {}
for i in range(1, runs + 1):
    r = json.load(open(f"{out}/run-{i}/report.json"))
    for v in r["cases"][0]["variants"]:
        if v.get("trace"):
            ratios.setdefault(v["name"], []).append(
                v["trace"]["span_ns"] / 1e6 / v["timing"]["median_ms"])
result = {"budget": 1.05, "runs": runs,
          "variants": {k: {"ratios": [round(x, 4) for x in v],
                           "median": round(statistics.median(v), 4)} for k, v in ratios.items()}}
pinned = result["variants"]["streams-pinned"]["median"]
result["streams_pinned_ratio"] = pinned
result["within_budget"] = pinned <= 1.05
json.dump(result, open(f"{out}/overhead.json", "w"), indent=1)
for k, v in result["variants"].items():
    print(f"overhead: {k:28s} traced span / untraced median {v['median']:.4f}  {v['ratios']}")
print(f"overhead: streams-pinned {pinned:.4f} (budget 1.05): "
      f"{'within' if pinned <= 1.05 else 'OVER'}")
sys.exit(0 if pinned <= 1.05 else 1)
PY
