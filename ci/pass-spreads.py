#!/usr/bin/env python3
"""Each variant's spread between the passes of `cuproof run --runs K`
reports, as compare estimates it for one side: the sd of the passes' log
medians about their report's mean, pooled over the reports given.

    ci/pass-spreads.py REPORT_DIR... > SPREADS

Writes "CASE/VARIANT SPREAD" lines, the input of ci/bench/noisy_share
(what compare's noisy share would be on a machine whose passes spread so);
variants with fewer than two passes in every report are left out."""
import json
import math
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sums = {}
    for d in sys.argv[1:]:
        path = os.path.join(d, "report.json") if os.path.isdir(d) else d
        try:
            report = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"pass-spreads: {path}: {e}")
        for c in report.get("cases") or []:
            for v in c.get("variants") or []:
                logs = [math.log(p["median_ms"]) for p in
                        (v.get("timing") or {}).get("passes") or [] if p.get("median_ms", 0) > 0]
                if len(logs) < 2:
                    continue
                mean = sum(logs) / len(logs)
                key = f'{c["name"]}/{v["name"]}'
                ss, df = sums.get(key, (0.0, 0))
                sums[key] = (ss + sum((x - mean) ** 2 for x in logs), df + len(logs) - 1)
    for key, (ss, df) in sums.items():
        print(f"{key} {math.sqrt(ss / df):.5f}")


if __name__ == "__main__":
    main()
