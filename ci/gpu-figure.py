#!/usr/bin/env python3
"""Whether a report's GPU time (schema 1.14: timing.gpu_samples_ms, CUDA
events around each timed run) is the right figure. With a report of
`CUPROOF_CHECK_GPU_TIME=1 cuproof run` (each timed run traced too), per
variant: the events' time of each timed run against CUPTI's span of the
same run's work (first kernel, copy or memset start to the last end, the
gate kernels left out), the median of their per-run ratio; without it,
against the traced run's span (another run, ungated and under CUPTI).
For a report of --runs K, how much the GPU time and the wall time moved
between its passes (the sd of the log of the passes' medians).

    ci/gpu-figure.py REPORT.json[.gz] [--within F]

Exits 1 when a variant's GPU time and CUPTI's span differ by more than F
(default 0.05) of the larger, naming each; the table is printed either
way. Variants judged on wall time are listed apart."""
import gzip
import json
import math
import statistics
import sys


def sd_log(xs):
    logs = [math.log(x) for x in xs]
    m = sum(logs) / len(logs)
    return math.sqrt(sum((a - m) ** 2 for a in logs) / (len(logs) - 1))


def main():
    args = sys.argv[1:]
    within = 0.05
    if "--within" in args:
        i = args.index("--within")
        within = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    path = args[0]
    opener = gzip.open if path.endswith(".gz") else open
    try:
        report = json.load(opener(path, "rt"))
    except (OSError, ValueError) as e:
        sys.exit(f"gpu-figure: {path}: {e}")
    print(f"report schema {report.get('schema_version')}, {path}")
    print("%-20s %-26s %5s %10s %10s %10s %-10s %7s %8s %8s" %
          ("case", "variant", "gated", "wall ms", "gpu ms", "cupti ms", "of the", "gpu/cupti",
           "wall sd", "gpu sd"))
    bad, rows, wall_rows = [], [], []
    for c in report.get("cases") or []:
        for v in c.get("variants") or []:
            t = v.get("timing") or {}
            if t.get("judged_on") == "wall_time":
                wall_rows.append((c["name"], v["name"], t.get("judged_on_why", "")))
                continue
            if not t.get("gpu_samples_ms"):
                continue
            gpu = t["gpu_median_ms"]
            series = {x.get("name"): x.get("values") or [] for x in v.get("series") or []}
            ev, cu = series.get("timed_gpu_ms"), series.get("timed_cupti_span_ms")
            tr = v.get("trace") or {}
            span = (tr.get("metrics") or tr).get("span_ns", 0) / 1e6
            gated = bool(t.get("gated"))
            if ev and cu and len(ev) == len(cu) and min(cu) > 0:
                ref = statistics.median(cu)
                ratio = statistics.median(e / c for e, c in zip(ev, cu))
                how = "same run"
            else:
                ref = span
                ratio = gpu / ref if ref > 0 else float("nan")
                how = "traced run"
            passes = t.get("passes") or []
            wsd = gsd = None
            if len(passes) >= 2 and all(p.get("gpu_median_ms") for p in passes):
                wsd = sd_log([p["median_ms"] for p in passes])
                gsd = sd_log([p["gpu_median_ms"] for p in passes])
            rows.append((c["name"], v["name"], wsd, gsd, gated))
            off = abs(ratio - 1) / max(ratio, 1) if ratio == ratio else float("inf")
            mark = "" if off <= within else "  <- off by %.1f%%" % (100 * off)
            if off > within:
                bad.append(f"{c['name']} {v['name']}")
            print("%-20s %-26s %5s %10.4f %10.4f %10.4f %-10s %7.3f %8s %8s%s" %
                  (c["name"], v["name"], "yes" if gated else "", t.get("median_ms", 0), gpu,
                   ref, how, ratio, "-" if wsd is None else "%.2f%%" % (100 * wsd),
                   "-" if gsd is None else "%.2f%%" % (100 * gsd), mark))
    if wall_rows:
        print("judged on wall time:")
        for r in wall_rows:
            print("  %-20s %-26s %s" % r)
    spread = [r for r in rows if r[2] is not None]
    if spread:
        print("between passes, median over %d variants: wall %.2f%%, GPU %.2f%%"
              % (len(spread), 100 * statistics.median(r[2] for r in spread),
                 100 * statistics.median(r[3] for r in spread)))
    print("GPU time within %.0f%% of the traced figure: %d of %d variants"
          % (100 * within, len(rows) - len(bad), len(rows)))
    if bad:
        print("off: " + ", ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
