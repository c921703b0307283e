#!/usr/bin/env python3
"""Each ordered pair's comparison in DIR (compare-A-B.json and .log, from
ci/device-issue28.sh PAIRS=1): its exit status, how many variants each
verdict got, the noisy ones without the runs that would decide, and the
trace metrics and findings counted as regressions. Then the totals the
issue's must-hold reads: slower anywhere, pairs that exited non-zero, and
the noisy share over every comparison.
    ci/compare-summary.py DIR"""
import collections
import glob
import json
import os
import re
import sys

d = sys.argv[1]
total = collections.Counter()
pairs = bad_exit = undecided_noisy = variants = 0
for path in sorted(glob.glob(os.path.join(d, "compare-*.json"))):
    name = os.path.basename(path)[len("compare-"):-len(".json")]
    log = path[:-5] + ".log"
    rc = re.search(r"^rc=(\d+)", open(log).read(), re.M) if os.path.exists(log) else None
    rc = int(rc.group(1)) if rc else -1
    c = json.load(open(path))
    verdicts = collections.Counter(v.get("verdict", "?").split(" ")[0] for v in c["variants"])
    noisy_open = [v["variant"] for v in c["variants"]
                  if v.get("verdict", "").startswith("noisy")
                  and not (v.get("runs_needed") or v.get("pairs_needed")
                           or v.get("reports_needed"))]
    metric_regs = sum(1 for m in c.get("metrics", []) if m.get("regression"))
    finding_regs = sum(1 for f in c.get("findings", []) if f.get("regression"))
    pairs += 1
    bad_exit += rc != 0
    undecided_noisy += len(noisy_open)
    variants += len(c["variants"])
    total.update(verdicts)
    print(f"{name}: exit {rc}; " + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items()))
          + f"; metric regressions {metric_regs}, finding regressions {finding_regs}"
          + (f"; noisy without runs needed: {noisy_open}" if noisy_open else ""))
noisy = total.get("noisy", 0)
print(f"{pairs} pairs, {variants} variant comparisons: "
      + ", ".join(f"{k} {n}" for k, n in sorted(total.items()))
      + f"; noisy {100.0 * noisy / max(variants, 1):.1f}%; pairs exiting non-zero {bad_exit}; "
      f"noisy without runs needed {undecided_noisy}")
