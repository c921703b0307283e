#!/usr/bin/env python3
"""The tables of samples/h200-gpu-time/queued-levels (issue 40).

  queued-levels.py levels LEVELS.txt
      ci/bench/queued_levels.cu's lines (process, mode, round, figure,
      median, min, max): per mode and figure, the spread between processes
      (round 0, and each process's mean over its rounds) and within a
      process over its rounds; then each process's rounds side by side.
  queued-levels.py draws REPORT.json...
      conway-streams' queued variants in reports of `run --processes P`
      whose processes each stopped at five timed runs: each process's GPU
      median, and the spread between passes of P processes drawn from
      them, their value the median or the mean of the P.
  queued-levels.py passes REPORT.json...
      each queued variant's passes: GPU value and wall median, and the
      relative standard deviation of each over the passes.
"""
import gzip
import json
import random
import statistics as st
import sys
from collections import defaultdict


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def rel_sd(xs):
    return st.stdev(xs) / st.mean(xs) * 100


def levels(path):
    d = defaultdict(dict)
    for line in open(path):
        p, mode, r, fig, med = line.split()[:5]
        d[(mode, fig)][(int(p), int(r))] = float(med)
    print("mode         figure      mean ms  between processes (round 0 / mean of rounds)"
          "  within a process over rounds (median / max)")
    for (mode, fig), v in sorted(d.items()):
        procs = sorted({p for p, _ in v})
        rounds = sorted({r for _, r in v})
        means = [st.mean(v[(p, r)] for r in rounds) for p in procs]
        within = [rel_sd([v[(p, r)] for r in rounds]) for p in procs]
        print(f"{mode:12s} {fig:10s} {st.mean(means):8.4f}  {rel_sd([v[(p, 0)] for p in procs]):5.2f}%"
              f" / {rel_sd(means):5.2f}%   {st.median(within):5.2f}% / {max(within):5.2f}%")
    print("\neach process's rounds, us (processes apart by |):")
    for fig in ("kernel-1", "kernel-1s", "d2d-1", "queued-1", "queued-16"):
        modes = sorted({m for m, f in d if f == fig})
        if not modes:
            continue
        print(fig)
        for mode in modes:
            v = d[(mode, fig)]
            procs = sorted({p for p, _ in v})
            rounds = sorted({r for _, r in v})
            print(f"  {mode:12s}", " | ".join(" ".join(f"{v[(p, r)] * 1000:6.1f}" for r in rounds)
                                             for p in procs))


def queued(report):
    for c in report["cases"]:
        if c["name"] != "conway-streams":
            continue
        for v in c["variants"]:
            if v["name"].startswith("queued"):
                yield v


def draws(paths):
    procs = defaultdict(list)
    for path in paths:
        for v in queued(load(path)):
            g = v["timing"]["gpu_samples_ms"]
            n = len(g) // 5 * 5
            procs[v["name"]] += [st.median(g[i:i + 5]) for i in range(0, n, 5)]
    random.seed(1)
    print("variant    processes  between single processes   between passes of P (median / mean of P)")
    for name, x in procs.items():
        m = st.mean(x)
        cells = []
        for p in (3, 5):
            for agg in (st.median, st.mean):
                s = [agg(random.sample(x, p)) for _ in range(4000)]
                cells.append(f"{st.stdev(s) / m * 100:.2f}%")
        print(f"{name:10s} {len(x):9d}  {rel_sd(x):5.2f}%                     "
              f"P3 {cells[0]} / {cells[1]}   P5 {cells[2]} / {cells[3]}")


def passes(paths):
    for path in paths:
        print(path)
        for v in queued(load(path)):
            ps = v["timing"]["passes"]
            g = [p["gpu_median_ms"] for p in ps]
            w = [p["median_ms"] for p in ps]
            print(f"  {v['name']:10s} {len(ps)} passes: GPU {min(g):.4f}-{max(g):.4f} ms, "
                  f"sd {rel_sd(g):.2f}%; wall {min(w):.4f}-{max(w):.4f} ms, sd {rel_sd(w):.1f}%"
                  f" (largest over smallest {max(w) / min(w):.2f})")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("levels", "draws", "passes"):
        sys.exit(__doc__)
    {"levels": lambda a: levels(a[0]), "draws": draws, "passes": passes}[sys.argv[1]](sys.argv[2:])
