#!/usr/bin/env python3
"""fsdp_train: a small model trained with fully sharded data parallelism
(PyTorch's FSDP2, `fully_shard`), each step an NVTX range "step", for
`cuproof exec` to show FSDP's two collectives apart (issue 42): the
all-gathers of the parameters (forward, and backward's re-gather) and the
reduce-scatters of the gradients (backward), each with its exposed time.

    python3 -m torch.distributed.run --nproc_per_node=2 fsdp_train.py [--mode fsdp|ddp]

--mode ddp trains the same model with DistributedDataParallel instead:
the negative control, whose gradients are all-reduced, with no
all-gather or reduce-scatter a step (DDP's one all-gather checks the
parameters' shapes at start).

Layers: LAYERS linear layers of WIDTH, each sharded alone (one all-gather
and one reduce-scatter each a step); STEPS steps of a batch of BATCH rows (each
rank its own).

Prints "fsdp_train: MODE, S steps on R ranks, loss L, right" and exits 0
when the loss fell and every rank holds the same parameters after
training; 1 when not; 2 without a GPU or NCCL.
"""
import argparse
import os
import sys

try:
    import torch
    import torch.distributed as dist
    from torch import nn
except ImportError as e:
    sys.exit(f"fsdp_train: needs PyTorch ({e})")

LAYERS, WIDTH, STEPS, BATCH = 4, 1024, 8, 64


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("fsdp", "ddp"), default="fsdp")
    mode = ap.parse_args().mode
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("fsdp_train: needs a GPU and NCCL")
        return 2
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dev = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same model on every rank
    model = nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh()) for _ in range(LAYERS)])
    model = model.to(dev)
    if mode == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in model:
            fully_shard(layer)
        fully_shard(model)
    else:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    # Each rank its own batch, the same every step: the loss must fall.
    gen = torch.Generator(device=dev).manual_seed(1 + rank)
    x = torch.randn(BATCH, WIDTH, device=dev, generator=gen)
    target = torch.zeros(BATCH, WIDTH, device=dev)
    losses = []
    for _ in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch.cuda.nvtx.range_pop()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    # Every rank must hold the same parameters: their sum, gathered whole.
    total = torch.zeros(1, device=dev, dtype=torch.float64)
    for p in model.parameters():
        t = p.full_tensor() if hasattr(p, "full_tensor") else p
        total += t.double().sum()
    sums = [torch.zeros_like(total) for _ in range(world)]
    dist.all_gather(sums, total)
    same = all(torch.equal(s, sums[0]) for s in sums)
    first, last = float(losses[0]), float(losses[-1])
    ok = same and last < first and last == last
    dist.destroy_process_group()
    print(f"fsdp_train: {mode}, {STEPS} steps on {world} ranks, loss {first:.4f} -> {last:.4f}, "
          f"{'right' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
