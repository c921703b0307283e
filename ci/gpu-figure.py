#!/usr/bin/env python3
"""Whether each variant's judged GPU figure is right. With a report of
`CUPROOF_CHECK_GPU_TIME=1 cuproof run` (each timed run traced too), per
variant judged on the GPU's time, the figure compare and ab judge it on
(compare_stats.h, cp_variant_judged_on_busy):

- its events, where its traced run's own busy time (span less idle less
  pageable copies) is at least EVENTS_SHARE of their median: held against
  CUPTI's span of the same timed runs' work (first kernel, copy or memset
  start to the last end, the gate kernels left out), the median of the
  per-run ratio;
- else its traced run's own busy time (the events hold waits): held
  against the median of CUPTI's own busy time of the timed runs
  (timed_cupti_own_ms), so that the one traced run stands for them.

A gated variant's run in which no gate kernel was recognised (the series
timed_cupti_gates) is named beside its row.

Without those series (a report not made so), events against the traced
run's span; a busy-time figure is then not checked. For a report of --runs K, how much the judged figure and the wall
time moved between its passes (the sd of the log of the passes' values).

    ci/gpu-figure.py REPORT.json[.gz] [--within F] [--floor-us U]

A figure within U microseconds (default 0.5) of CUPTI's agrees however
small it is: a kernel of 5 us moves by up to 0.35 us between occasions of
one process (rtc-unroll on the H200: its traced run 0.26 to 0.35 us, 5% to
7%, from the median of the timed runs, beyond their own range), which no
figure of one run can be closer than.

Exits 1 when a variant's figure and CUPTI's differ by more than F
(default 0.05) of the larger, naming each; 2 when none does but a
variant judged on its own busy time could not be checked (no
timed_cupti_own_ms); the table is printed either way. Variants judged on
wall time are listed apart."""
import gzip
import json
import math
import statistics
import sys

# compare_stats.h's CP_CMP_EVENTS_SHARE: the rule is the C one; this is
# its reading for the table (tests/test_compare_figure.c holds the C one).
EVENTS_SHARE = 0.95


def sd_log(xs):
    logs = [math.log(x) for x in xs]
    m = sum(logs) / len(logs)
    return math.sqrt(sum((a - m) ** 2 for a in logs) / (len(logs) - 1))


def own_ns(m):
    """compare_stats.c's cp_metrics_own_ns."""
    pageable = m.get("pageable_copy_sum_ns") or (
        m.get("copy_busy_ns", 0) if m.get("pageable_copies") else 0)
    span, idle = m.get("span_ns", 0), m.get("idle_ns", 0)
    if idle > span:
        return 0
    return max(0, span - idle - pageable)


def main():
    args = sys.argv[1:]
    within, floor_ms = 0.05, 0.5e-3
    if "--within" in args:
        i = args.index("--within")
        within = float(args[i + 1])
        del args[i:i + 2]
    if "--floor-us" in args:
        i = args.index("--floor-us")
        floor_ms = float(args[i + 1]) / 1e3
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
    print("%-20s %-26s %5s %-6s %10s %10s %10s %-10s %7s %8s %8s" %
          ("case", "variant", "gated", "figure", "wall ms", "figure ms", "cupti ms", "of the",
           "ratio", "wall sd", "fig sd"))
    bad, unchecked, rows, wall_rows = [], [], [], []
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
            ev = series.get("timed_gpu_ms")
            cu, co = series.get("timed_cupti_span_ms"), series.get("timed_cupti_own_ms")
            tr = v.get("trace") or {}
            m = tr.get("metrics") or tr
            traced_own = own_ns(m) / 1e6
            gated = bool(t.get("gated"))
            on_busy = bool(m) and not gated and traced_own < EVENTS_SHARE * gpu
            if on_busy:
                fig = traced_own
                if co and min(co) > 0:
                    ref, how = statistics.median(co), "timed own"
                    ratio = fig / ref if ref > 0 else float("nan")
                else:
                    # Its own figure against itself would prove nothing.
                    ref, how, ratio = float("nan"), "unchecked", float("nan")
            elif ev and cu and len(ev) == len(cu) and min(cu) > 0:
                fig = gpu
                ref = statistics.median(cu)
                ratio = statistics.median(e / c for e, c in zip(ev, cu))
                how = "same run"
            else:
                fig = gpu
                ref = m.get("span_ns", 0) / 1e6
                ratio = gpu / ref if ref > 0 else float("nan")
                how = "traced run"
            passes = t.get("passes") or []
            wsd = gsd = None
            if len(passes) >= 2 and all(p.get("gpu_median_ms") for p in passes):
                vals = ([own_ns(p.get("metrics") or {}) for p in passes] if on_busy
                        else [p["gpu_median_ms"] for p in passes])
                if min(vals) > 0:
                    wsd = sd_log([p["median_ms"] for p in passes])
                    gsd = sd_log(vals)
            rows.append((c["name"], v["name"], wsd, gsd, gated))
            off = abs(ratio - 1) / max(ratio, 1) if ratio == ratio else float("inf")
            if off > within and abs(fig - ref) <= floor_ms:
                off = 0  # within the floor: as close as one run can be
            mark = "" if off <= within else "  <- off by %.1f%%" % (100 * off)
            if how == "unchecked":
                mark = "  <- not checked: no timed_cupti_own_ms"
                unchecked.append(f"{c['name']} {v['name']}")
            elif off > within:
                bad.append(f"{c['name']} {v['name']}")
            # A gated variant's runs each hold the runner's gate kernel;
            # one with none recognised (timed_cupti_gates) says why its
            # span is off (the runner lists that run on stderr).
            gates = series.get("timed_cupti_gates")
            if gated and gates and min(gates) < 1:
                mark += "  <- no gate kernel recognised in %d of %d runs" % (
                    sum(1 for g in gates if g < 1), len(gates))
            print("%-20s %-26s %5s %-6s %10.4f %10.4f %10.4f %-10s %7.3f %8s %8s%s" %
                  (c["name"], v["name"], "yes" if gated else "", "busy" if on_busy else "events",
                   t.get("median_ms", 0), fig, ref, how, ratio,
                   "-" if wsd is None else "%.2f%%" % (100 * wsd),
                   "-" if gsd is None else "%.2f%%" % (100 * gsd), mark))
    if wall_rows:
        print("judged on wall time:")
        for r in wall_rows:
            print("  %-20s %-26s %s" % r)
    spread = [r for r in rows if r[2] is not None]
    if spread:
        print("between passes, median over %d variants: wall %.2f%%, judged figure %.2f%%"
              % (len(spread), 100 * statistics.median(r[2] for r in spread),
                 100 * statistics.median(r[3] for r in spread)))
    print("judged figure within %.0f%% (or %.2g us) of CUPTI's: %d of %d variants%s"
          % (100 * within, floor_ms * 1e3, len(rows) - len(bad) - len(unchecked), len(rows),
             "; %d not checked" % len(unchecked) if unchecked else ""))
    if bad:
        print("off: " + ", ".join(bad))
        sys.exit(1)
    if unchecked:
        print("not checked (the report was not made with CUPROOF_CHECK_GPU_TIME=1 by a build "
              "that records timed_cupti_own_ms): " + ", ".join(unchecked))
        sys.exit(2)


if __name__ == "__main__":
    main()
