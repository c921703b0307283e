#!/usr/bin/env python3
"""long_exec: a long, busy CUDA program for the streaming analysis'
benchmark on a real trace (ci/bench.sh's figures on synthetic traces have
this as their check against reality).

It imitates the shape of a training loop in CuPy: STEPS steps, each inside
an NVTX range "step"; in each step every one of 8 streams copies a batch in
from pinned host memory, runs 10 small elementwise kernels on it and copies
the result out, all asynchronous; every 50 steps the host waits for the
device. About 200 activity records a step (96 device records and their 96
launch calls), so the default 12000 steps make a trace of about 2.4M
records in a few seconds of GPU time. Exits 0 when the last batch's result
is right (x * 2 / 2 ten times over, exactly), 1 otherwise.

  cuproof exec --out OUT -- python3 ci/bench/long_exec.py [--steps N]
  cuproof export OUT/proc OUT --format rec   (then stream_bench analyse)
"""
import argparse
import sys
import time

try:
    import cupy
    import numpy as np
except ImportError as e:
    sys.exit(f"long_exec: needs CuPy and NumPy ({e})")

STREAMS = 8
BATCH = 4096
KERNELS = 10


def calibration():
    """The least of 5 timings of a fixed pure-Python workload (s)."""
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        acc = 0
        for i in range(300000):
            acc += i * i % 7
        best = min(best, time.perf_counter() - t)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12000)
    p.add_argument("--blocks", help="write each 50 steps' time (s), one a line, to this file")
    p.add_argument("--calibrate", action="store_true",
                   help="time a fixed pure-Python workload before and after the loop and print "
                        "it: a measure of the process's own pace that tracing cannot touch "
                        "(no CUDA call in it), to tell a machine's per-process levels from "
                        "tracing's cost")
    args = p.parse_args()
    steps = args.steps
    blocks = []
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
    host_in = [cupy.cuda.alloc_pinned_memory(BATCH * 4) for _ in range(STREAMS)]
    host_out = [cupy.cuda.alloc_pinned_memory(BATCH * 4) for _ in range(STREAMS)]
    views_in = [np.frombuffer(h, np.float32, BATCH) for h in host_in]
    views_out = [np.frombuffer(h, np.float32, BATCH) for h in host_out]
    for i, v in enumerate(views_in):
        v[:] = np.arange(BATCH, dtype=np.float32) + i
    dev = [cupy.empty(BATCH, cupy.float32) for _ in range(STREAMS)]
    before = calibration() if args.calibrate else 0
    start = time.perf_counter()
    for step in range(steps):
        cupy.cuda.nvtx.RangePush("step")
        for s, st in enumerate(streams):
            with st:
                dev[s].set(views_in[s], stream=st)
                x = dev[s]
                for _ in range(KERNELS // 2):
                    x = x * 2.0
                    x = x / 2.0
                x.get(stream=st, out=views_out[s])
        cupy.cuda.nvtx.RangePop()
        if step % 50 == 49:
            cupy.cuda.Device().synchronize()
            blocks.append(time.perf_counter())
    cupy.cuda.Device().synchronize()
    wall = time.perf_counter() - start
    ok = all(np.array_equal(views_out[s], views_in[s]) for s in range(STREAMS))
    print(f"long_exec: {steps} steps in {wall:.3f} s, {'right' if ok else 'WRONG'}")
    if args.calibrate:
        print(f"long_exec: calibration {before:.4f} s before, {calibration():.4f} s after")
    if args.blocks:
        with open(args.blocks, "w") as f:
            prev = start
            for t in blocks:
                f.write(f"{t - prev:.6f}\n")
                prev = t
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
