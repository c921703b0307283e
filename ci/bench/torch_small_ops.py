#!/usr/bin/env python3
"""torch_small_ops: a launch-bound PyTorch loop, for what tracing costs a
program of many small operations (issue 30; ci/bench/exec-overhead.sh).

STEPS steps, each inside an NVTX range "step": a small MLP's forward and
backward pass on a batch of 64 x 256 float32 (three Linear layers, ReLU,
a mean-squared loss) and an SGD step, about 40 kernels a step of a few
microseconds each, so the host's launching sets the pace; every 100 steps
the host waits for the device. Prints the loop's own time as
"torch_small_ops: N steps in X s" (what the benchmark reads) and exits 0
when the loss is finite and fell, 1 otherwise.
"""
import argparse
import sys
import time

try:
    import torch
except ImportError as e:
    sys.exit(f"torch_small_ops: needs PyTorch ({e})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3000)
    steps = p.parse_args().steps
    if not torch.cuda.is_available():
        print("torch_small_ops: PyTorch sees no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    torch.manual_seed(30)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 16)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device=dev)
    target = torch.randn(64, 16, device=dev)
    first = None
    # One step outside the loop: cuBLAS's and the allocator's set-up.
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for step in range(steps):
        torch.cuda.nvtx.range_push("step")
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        if step % 100 == 99:
            torch.cuda.synchronize()
        if first is None:
            first = loss.item()
    torch.cuda.synchronize()
    wall = time.perf_counter() - start
    last = loss.item()
    ok = last == last and last < first
    print(f"torch_small_ops: {steps} steps in {wall:.3f} s, loss {first:.4f} -> {last:.4f}, "
          f"{'right' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
