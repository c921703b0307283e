#!/usr/bin/env python3
"""Runs of several processes, made from the passes of `cuproof run --runs K`
reports (issue 28's experiments, samples/h100-layout/README.md).

    ci/group-passes.py [--mean] OUTDIR NAME G R REPORT_DIR...

Takes every variant's passes (each one process) from the reports in the
order given and writes reports OUTDIR/NAME-1, NAME-2, ... of R passes
each, every pass the median of G consecutive real passes (its samples all
of theirs; with --mean their geometric mean): what a run of G processes
would give, so that compare can be
tried on runs of several processes without running them. G 1 R 3 cuts
K-pass reports into three-pass ones. Leftover passes are dropped."""
import copy
import math
import json
import os
import statistics
import sys


def passes_of(report, case, variant):
    for c in report["cases"]:
        if c["name"] == case:
            for v in c.get("variants") or []:
                if v["name"] == variant:
                    return v.get("timing", {}).get("passes") or []
    return []


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    args = sys.argv[1:]
    mean = args[0] == "--mean"
    if mean:
        args = args[1:]
    out, name, g, r = args[0], args[1], int(args[2]), int(args[3])
    reports = [json.load(open(os.path.join(d, "report.json"))) for d in args[4:]]
    per = g * r
    first = reports[0]
    counts = [len(passes_of(x, c["name"], v["name"])) for x in reports
              for c in first["cases"][:1] for v in (c.get("variants") or [])[:1]]
    made = sum(counts) // per
    for s in range(made):
        rep = copy.deepcopy(first)
        for c in rep["cases"]:
            for v in c.get("variants") or []:
                every = []
                for x in reports:
                    every += passes_of(x, c["name"], v["name"])
                chunk = every[s * per:(s + 1) * per]
                t = v.setdefault("timing", {})
                if len(chunk) < per:
                    t["passes"] = []
                    continue
                runs = []
                for k in range(r):
                    group = sorted(chunk[k * g:(k + 1) * g], key=lambda p: p["median_ms"])
                    run = copy.deepcopy(group[len(group) // 2])
                    run["samples_ms"] = sum((p["samples_ms"] for p in group), [])
                    if mean:
                        run["median_ms"] = math.exp(statistics.mean(
                            math.log(p["median_ms"]) for p in group))
                    runs.append(run)
                t["passes"] = runs
                t["median_ms"] = statistics.median(p["median_ms"] for p in runs)
        d = os.path.join(out, f"{name}-{s + 1}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "report.json"), "w") as f:
            json.dump(rep, f)
    print(made)


if __name__ == "__main__":
    main()
