#!/usr/bin/env python3
"""pipeline_train: a model in two stages on two ranks, trained with a
one-forward-one-backward schedule over MICRO microbatches, each stage's
activations sent forward and its input's gradients sent back with
NCCL's send and receive (issue 42: a pipeline's point-to-point transfers,
each send paired with its receive across the ranks); each step an NVTX
range "step", its loss all-reduced at its end.

    python3 -m torch.distributed.run --nproc_per_node=2 pipeline_train.py

The schedule: rank 0 sends two microbatches' activations before it
receives the first gradient, then one of each in turn (1F1B with a
warm-up of two); rank 1 receives and sends in the same order, so the
ranks' calls are one sequence (transfers issued one at a time, as
dist.send and dist.recv issue them, need that). Every transfer is a
microbatch's activations or gradients: ROWS x WIDTH float32, 128 KiB.

Prints "pipeline_train: S steps of M microbatches on 2 ranks, loss A ->
B, right" and exits 0 when the loss fell and every gradient arrived
whole; 1 when not; 2 without two ranks, a GPU or NCCL.
"""
import os
import sys

try:
    import torch
    import torch.distributed as dist
    from torch import nn
except ImportError as e:
    sys.exit(f"pipeline_train: needs PyTorch ({e})")

WIDTH, ROWS, MICRO, STEPS = 1024, 32, 4, 6


def order(m):
    """The transfers of one step in the order both ranks issue them:
    ("a", i) microbatch i's activations, ("g", i) its gradients."""
    out = [("a", 0), ("a", 1)]
    for i in range(m):
        out.append(("g", i))
        if i + 2 < m:
            out.append(("a", i + 2))
    return out


def main():
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("pipeline_train: needs a GPU and NCCL")
        return 2
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dev = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    if world != 2:
        print("pipeline_train: needs two ranks")
        return 2
    torch.manual_seed(rank)
    stage = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh(), nn.Linear(WIDTH, WIDTH)).to(dev)
    opt = torch.optim.SGD(stage.parameters(), lr=0.02)
    gen = torch.Generator(device=dev).manual_seed(7)
    inputs = [torch.randn(ROWS, WIDTH, device=dev, generator=gen) for _ in range(MICRO)]
    target = torch.zeros(ROWS, WIDTH, device=dev)
    ok, first, last = True, None, None
    for _ in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        outs, ins, loss_sum = {}, {}, torch.zeros(1, device=dev)
        for kind, i in order(MICRO):
            if rank == 0 and kind == "a":
                outs[i] = stage(inputs[i])
                dist.send(outs[i].detach(), 1)
            elif rank == 0:
                g = torch.empty(ROWS, WIDTH, device=dev)
                dist.recv(g, 1)
                ok &= bool(torch.isfinite(g).all())
                outs[i].backward(g)
            elif kind == "a":
                a = torch.empty(ROWS, WIDTH, device=dev)
                dist.recv(a, 0)
                ins[i] = a.requires_grad_()
            else:
                loss = nn.functional.mse_loss(stage(ins[i]), target) / MICRO
                loss.backward()
                loss_sum += loss.detach()
                dist.send(ins[i].grad, 0)
        opt.step()
        opt.zero_grad()
        dist.all_reduce(loss_sum)  # rank 0's share is 0: the loss, on both
        torch.cuda.nvtx.range_pop()
        first = float(loss_sum) if first is None else first
        last = float(loss_sum)
    torch.cuda.synchronize()
    ok &= last < first
    dist.destroy_process_group()
    print(f"pipeline_train: {STEPS} steps of {MICRO} microbatches on {world} ranks, loss "
          f"{first:.5f} -> {last:.5f}, {'right' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
