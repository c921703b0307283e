#!/usr/bin/env python3
"""ddp_train: a small PyTorch DistributedDataParallel training loop for
`cuproof exec` to trace under torchrun, one process per GPU (issue 27).

    python3 -m torch.distributed.run --nproc_per_node=2 ddp_train.py --mode MODE

Each of STEPS steps, inside an NVTX range "step" (torch.cuda.nvtx), runs
forward, backward and the optimizer step of an MLP of LAYERS square layers
on a batch of its own per rank. The modes are the three programs the
issue asks for, each written for one verdict:

  overlap     DDP as users run it: gradients are all-reduced in buckets of
              BUCKET_MB while backward still computes the earlier layers,
              so NCCL kernels run beside compute kernels on each GPU
              (expected: the communication/compute overlap holds on every
              rank).
  serial      the control that cannot overlap: backward under no_sync()
              (DDP reduces nothing), then one all-reduce of every gradient,
              flattened, after backward ended (expected: the overlap
              expectation fails).
  straggler   as overlap, but rank SLOW_RANK sleeps SLOW_MS before each
              step's forward: every rank's step lasts as long (the
              all-reduce waits for it), but that rank arrives last at the
              collectives (expected: the straggler finding names it).

At the end every rank checks that its parameters equal rank 0's (an
all-reduce of their checksum): exit 0 when they do, 1 when not, 2 without
two GPUs or without NCCL.

--backend gloo runs the ranks on whatever GPUs there are, several on one
(rank r on GPU r modulo the GPUs visible), with gloo's collectives, which
stage through the host: no NCCL kernel, so no figure of communication,
but each rank's steps (issue 43's capture windows on one GPU: every rank
captures the same steps).
"""
import argparse
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:  # the test is not registered without it
    sys.exit(f"ddp_train: needs PyTorch ({e})")

STEPS = 10
LAYERS = 8
WIDTH = 4096
BATCH = 512
BUCKET_MB = 8
SLOW_RANK = 1
SLOW_MS = 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["overlap", "serial", "straggler"], default="overlap")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--backend", choices=["nccl", "gloo"], default="nccl")
    args = ap.parse_args()
    if "LOCAL_RANK" not in os.environ:
        print("ddp_train: run me under torchrun (python3 -m torch.distributed.run)",
              file=sys.stderr)
        return 2
    local = int(os.environ["LOCAL_RANK"])
    shared = args.backend == "gloo"
    if not torch.cuda.is_available() or (not shared and torch.cuda.device_count() <= local):
        print(f"ddp_train: rank {local} has no GPU of its own "
              f"({torch.cuda.device_count()} visible)", file=sys.stderr)
        return 2
    if not shared and not dist.is_nccl_available():
        print("ddp_train: this PyTorch has no NCCL", file=sys.stderr)
        return 2
    gpu = local % torch.cuda.device_count() if shared else local
    torch.cuda.set_device(gpu)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", gpu)
    torch.manual_seed(1234)  # the same initial weights on every rank
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(dev)
    ddp = DDP(model, device_ids=[gpu], bucket_cap_mb=BUCKET_MB)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    gen = torch.Generator(device=dev).manual_seed(100 + rank)  # each rank its own data

    for step in range(args.steps):
        x = torch.randn(BATCH, WIDTH, device=dev, generator=gen)
        y = torch.randn(BATCH, WIDTH, device=dev, generator=gen)
        torch.cuda.nvtx.range_push("step")
        if args.mode == "straggler" and rank == SLOW_RANK:
            time.sleep(SLOW_MS / 1000.0)
        opt.zero_grad(set_to_none=True)
        if args.mode == "serial":
            with ddp.no_sync():
                loss = torch.nn.functional.mse_loss(ddp(x), y)
                loss.backward()
            grads = [p.grad for p in ddp.parameters()]
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat)
            flat /= world
            offset = 0
            for g in grads:
                g.copy_(flat[offset:offset + g.numel()].view_as(g))
                offset += g.numel()
        else:
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
        opt.step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()

    # Every rank must hold rank 0's parameters: DDP (or the manual
    # all-reduce) kept them equal.
    checksum = torch.stack([p.detach().double().sum() for p in model.parameters()]).sum()
    mine = checksum.clone()
    dist.broadcast(checksum, src=0)
    same = bool(torch.isclose(mine, checksum, rtol=0, atol=1e-9 * abs(checksum.item()) + 1e-12))
    ok = torch.tensor([1 if same else 0], device=dev)
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    dist.destroy_process_group()
    if rank == 0:
        print(f"ddp_train: {args.mode}, {world} ranks, {args.steps} steps: parameters "
              f"{'equal on every rank' if ok.item() else 'DIFFER between ranks'}")
    return 0 if ok.item() else 1


if __name__ == "__main__":
    sys.exit(main())
