#!/usr/bin/env python3
"""How much each figure of a `cuproof run --runs K` report moves between
its passes: the wall time's (each pass's median, what compare judges
today) against the GPU's own busy time (each pass's traced device_busy_ns,
kernels and copies), per variant and in the median, and the same for the
host-bound variants (busy less than 85% of the wall time). The evidence
issue 40 rests on: a figure that spreads less decides more comparisons.

    ci/wall-vs-device.py REPORT.json[.gz] > SPREAD.txt"""
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
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    try:
        report = json.load(opener(path, "rt"))
    except (OSError, ValueError) as e:
        sys.exit(f"wall-vs-device: {path}: {e}")
    rows = []
    for c in report.get("cases") or []:
        for v in c.get("variants") or []:
            passes = (v.get("timing") or {}).get("passes") or []
            wall = [p.get("median_ms", 0) for p in passes]
            busy = [p.get("device_busy_ns", 0) for p in passes]
            if len(passes) < 3 or min(wall) <= 0:
                continue
            traced = min(busy) > 0
            share = (sum(busy) / len(busy)) / 1e6 / (sum(wall) / len(wall)) if traced else None
            rows.append((c["name"], v["name"], sd_log(wall), sd_log(busy) if traced else None, share))
    if not rows:
        sys.exit(f"wall-vs-device: {path}: no variant with 3 passes or more")
    device = [r[3] for r in rows if r[3] is not None]
    print(f"variants with 3 passes or more: {len(rows)}, with device time: {len(device)}")
    print("median spread between passes: wall %.2f%%, device busy %.2f%%"
          % (100 * statistics.median(r[2] for r in rows), 100 * statistics.median(device)))
    host = [r for r in rows if r[4] is not None and r[4] < 0.85]
    if host:
        print("host-bound (device busy < 85%% of wall): %d; wall spread median %.2f%%, device %.2f%%"
              % (len(host), 100 * statistics.median(r[2] for r in host),
                 100 * statistics.median(r[3] for r in host)))
    print("the variants whose wall time spread most:")
    for r in sorted(rows, key=lambda r: -r[2])[:8]:
        print("  %-28s %-26s wall %.1f%%  device %s  busy share %s"
              % (r[0], r[1], 100 * r[2], "-" if r[3] is None else "%.1f%%" % (100 * r[3]),
                 "-" if r[4] is None else "%.2f" % r[4]))


if __name__ == "__main__":
    main()
