#!/usr/bin/env python3
"""torch_pageable: PyTorch copies from pageable host memory with
non_blocking=True while kernels queued on another stream run, for the
cuda_memcpy_async finding (issue 29).

Each of 5 steps, inside an NVTX range "step": on stream A, a chain of 8
float32 products of a 4096 x 4096 matrix with a permutation matrix (long:
several ms, queued at once); then on stream B, 4 host tensors of 1024 x
1024 float32 copied to the GPU with .to(device, non_blocking=True) and
summed there. From pageable memory (the default) each copy call returns
only once the driver has staged its data through its own pinned buffer:
the host thread is blocked inside every call, yet the copies themselves
run while stream A's products run. With --pinned the host tensors are
pinned: the calls return at once (the negative control: no finding).

Every copy and product is checked on the CPU (exact: the products permute
columns, TF32 off); exits 0 when every result is right, 1 otherwise.
Needs PyTorch with CUDA.
"""
import sys

try:
    import torch
except ImportError as e:
    sys.exit(f"torch_pageable: needs PyTorch ({e})")

STEPS = 5
N = 4096
PRODUCTS = 8
COPIES = 4
M = 1024


def main():
    pinned = "--pinned" in sys.argv[1:]
    if not torch.cuda.is_available():
        print("torch_pageable: PyTorch sees no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(29)
    perm = torch.randperm(N, generator=gen)
    p_host = torch.zeros(N, N)
    p_host[perm, torch.arange(N)] = 1.0  # (A @ P)[:, j] = A[:, perm[j]]
    p_dev = p_host.to(dev)
    a_host = torch.randn(N, N, generator=gen)
    a_dev = a_host.to(dev)
    cols = torch.arange(N)
    for _ in range(PRODUCTS):
        cols = cols[perm]
    expected_a = a_host[:, cols]
    inputs = [torch.randn(M, M, generator=gen) for _ in range(COPIES)]
    if pinned:
        inputs = [x.pin_memory() for x in inputs]
    expected_sums = [x.to(torch.float64).sum().item() for x in inputs]
    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()

    # One warm-up step outside the ranges (cuBLAS's set-up on stream A).
    with torch.cuda.stream(sa):
        r = a_dev
        for _ in range(PRODUCTS):
            r = r @ p_dev
    torch.cuda.synchronize()

    wrong = 0
    for step in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        with torch.cuda.stream(sa):
            r = a_dev
            for _ in range(PRODUCTS):
                r = r @ p_dev
        copied, sums = [], []
        with torch.cuda.stream(sb):
            for x in inputs:
                y = x.to(dev, non_blocking=True)
                copied.append(y)
                sums.append(y.to(torch.float64).sum())
        sa.synchronize()
        sb.synchronize()
        torch.cuda.nvtx.range_pop()
        if not torch.equal(r.cpu(), expected_a):
            print(f"torch_pageable: step {step}: wrong product", file=sys.stderr)
            wrong += 1
        for k, (x, y, s) in enumerate(zip(inputs, copied, sums)):
            if not torch.equal(y.cpu(), x):
                print(f"torch_pageable: step {step}, copy {k}: wrong data", file=sys.stderr)
                wrong += 1
            if abs(s.item() - expected_sums[k]) > 1e-6 * M * M:
                print(f"torch_pageable: step {step}, copy {k}: wrong sum", file=sys.stderr)
                wrong += 1
    if wrong:
        return 1
    print(f"torch_pageable: {STEPS} steps, {COPIES} {'pinned' if pinned else 'pageable'} "
          f"copies each beside {PRODUCTS} products, every result right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
