#!/usr/bin/env python3
"""What a capture window costs the CuPy loop, with each process's own
level taken out (issue 43). On the H200 VM each process of the loop runs
at a level of its own (the plain loop 3.95 to 5.76 s in 7 rounds of one
call), so a median of 5 or 7 rounds cannot resolve 3%. This reads the
runs of ci/device-issue43.sh's `levels` step, DIR/FORM-I.log and
DIR/FORM-I.blocks (FORM plain, capture: range:step@1001-1050, never: a
window that never opens; I the round), each log with the loop's time and
a pure-Python calibration (long_exec.py --calibrate), each blocks file
the 60 50-step blocks' times, and prints the cost four ways:

- raw: the median loop over the median plain loop (what
  capture-window.sh prints);
- paired: the median over rounds of each round's loop over its plain's;
- calibrated: each loop over its own process's calibration (no CUDA call
  in it, so tracing cannot touch it), then as raw; only as good as the
  calibration follows the loop's level, so the correlation is printed;
- own pace: each run's loop over 60 times the median of its own blocks
  after the window (steps 1101-3000, CUPTI detached there), then paired:
  what the hooks before the window, the window and the detach added to a
  process beyond its own pace after them. It cannot see a cost that
  stays after the detach; `never` against plain bounds what the hooks
  alone cost, and the blocks before the window against those after it
  (each form against plain's own drift) show both.
- fast pace: the machine's pace flips within a process (50-step blocks
  of 56-61 ms and of 80-90 ms on the H200 VM, in runs of either form,
  and a pure-Python calibration 18 or 31 ms, before and after the loop
  alike); the 10th percentile of a run's blocks (the first, CuPy's
  kernel loading, left out) is its pace in the fast mode, and the median
  of those over the runs, against plain's, the steps' own cost with the
  flips taken out; beside it the same for the blocks before the window
  (the hooks alone) and after it (detached), and the first block's
  median (the loading, 0.38 to 0.98 s a run, in the loop's time).

    ci/bench/capture-levels.py DIR
"""
import math
import os
import re
import statistics
import sys

FORMS = ("plain", "capture", "never")
WINDOW_BLOCK = 20  # steps 1001-1050, blocks of 50 from 0
AFTER = slice(22, None)  # from steps 1101: the window and the detach's block left out
BEFORE = slice(0, WINDOW_BLOCK)


def read_run(d, form, i):
    try:
        log = open(os.path.join(d, f"{form}-{i}.log")).read()
        blocks = [float(x) for x in open(os.path.join(d, f"{form}-{i}.blocks")).read().split()]
    except OSError:
        return None
    loop = re.search(r"long_exec: \d+ steps in ([0-9.]+) s", log)
    cal = re.search(r"calibration ([0-9.]+) s before, ([0-9.]+) s after", log)
    if not loop or not cal or len(blocks) < 30:
        return None
    return {"loop": float(loop.group(1)), "cal": (float(cal.group(1)) + float(cal.group(2))) / 2,
            "blocks": blocks}


def p10(xs):
    xs = sorted(xs)
    return xs[int(0.1 * (len(xs) - 1))]


def pct(x):
    return f"{100 * (x - 1):+.1f}%"


def pearson(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy) if sx and sy else float("nan")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    rounds = sorted({int(m.group(1)) for f in os.listdir(d)
                     for m in [re.match(r"plain-(\d+)\.log$", f)] if m})
    runs = {}
    for i in rounds:
        got = {f: read_run(d, f, i) for f in FORMS}
        if got["plain"]:
            runs[i] = got
    if not runs:
        sys.exit(f"capture-levels: no complete plain run in {d}")
    print(f"capture-levels: {len(runs)} rounds in {d}")
    print("%-8s %6s %22s %22s %8s %8s" % ("form", "runs", "loop s (min-max)", "calibration ms",
                                         "before/", "r(loop,"))
    print("%-8s %6s %22s %22s %8s %8s" % ("", "", "", "", "after", "calib)"))
    for f in FORMS:
        rs = [r[f] for r in runs.values() if r[f]]
        if not rs:
            continue
        loops = [r["loop"] for r in rs]
        cals = [r["cal"] for r in rs]
        ba = statistics.median(statistics.median(r["blocks"][BEFORE]) /
                               statistics.median(r["blocks"][AFTER]) for r in rs)
        print("%-8s %6d %8.3f (%5.2f-%5.2f) %8.2f (%5.2f-%5.2f) %8.3f %8.2f" %
              (f, len(rs), statistics.median(loops), min(loops), max(loops),
               1e3 * statistics.median(cals), 1e3 * min(cals), 1e3 * max(cals), ba,
               pearson(loops, cals) if len(rs) > 2 else float("nan")))
    print()
    print("%-8s %9s %9s %11s %9s %13s" % ("form", "raw", "paired", "calibrated", "own pace",
                                         "window block"))
    plain = [r["plain"] for r in runs.values()]
    for f in FORMS[1:]:
        pairs = [(r["plain"], r[f]) for r in runs.values() if r[f]]
        if not pairs:
            continue
        raw = statistics.median(b["loop"] for _, b in pairs) / statistics.median(
            p["loop"] for p in plain)
        paired = statistics.median(b["loop"] / a["loop"] for a, b in pairs)
        cal = statistics.median(b["loop"] / b["cal"] for _, b in pairs) / statistics.median(
            p["loop"] / p["cal"] for p in plain)

        def own(r):
            return r["loop"] / (len(r["blocks"]) * statistics.median(r["blocks"][AFTER]))
        pace = statistics.median(own(b) / own(a) for a, b in pairs)
        # The window's block over its neighbours' median, less plain's same block.
        def wb(r):
            around = r["blocks"][WINDOW_BLOCK - 5:WINDOW_BLOCK] + r["blocks"][WINDOW_BLOCK + 2:WINDOW_BLOCK + 7]
            return r["blocks"][WINDOW_BLOCK] - statistics.median(around)
        win = statistics.median(wb(b) - wb(a) for a, b in pairs)
        print("%-8s %9s %9s %11s %9s %10.1f ms" % (f, pct(raw), pct(paired), pct(cal), pct(pace),
                                                  1e3 * win))
    print("\nraw, paired, calibrated: the loop against plain's; own pace: against the run's "
          "own blocks after the window; window block: the window's 50 steps beyond their "
          "neighbours', less plain's")
    print()
    print("%-8s %11s %11s %11s %13s" % ("form", "fast pace", "before", "after", "first block"))
    fast = {}
    for f in FORMS:
        rs = [r[f] for r in runs.values() if r[f]]
        if rs:
            fast[f] = [statistics.median(p10(r["blocks"][k]) for r in rs)
                       for k in (slice(1, None), slice(1, WINDOW_BLOCK), AFTER)]
            fast[f].append(statistics.median(r["blocks"][0] for r in rs))
    for f, v in fast.items():
        rel = [pct(v[k] / fast["plain"][k]) if f != "plain" else "%.1f ms" % (1e3 * v[k])
               for k in range(3)]
        print("%-8s %11s %11s %11s %10.0f ms" % (f, rel[0], rel[1], rel[2], 1e3 * v[3]))
    print("fast pace: the median over runs of each run's 10th-percentile 50-step block "
          "(plain's in ms, the others against it)")


if __name__ == "__main__":
    main()
