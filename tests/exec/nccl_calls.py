#!/usr/bin/env python3
"""nccl_calls: each kind of NCCL call a training job makes, with sizes
known in advance, for `cuproof exec` to record NCCL's own account of them
(its NVTX payloads: communicator, message size, peer or root; issue 42).

    python3 -m torch.distributed.run --nproc_per_node=N nccl_calls.py

Every rank, inside an NVTX range "op" each: all-reduces of 1 and 4 MiB
(three of each), a broadcast of 1 MiB from rank 0, an all-gather and a
reduce-scatter of 1 MiB a rank (FSDP's pair), and with two ranks or more
a send from each even rank to the next and its receive (a pipeline's
hand-over, 2 MiB) and an all-reduce of 1 MiB on a second process group
(new_group of every rank: another communicator). Float32 throughout, so
NCCL's message sizes are the element counts times 4.

Prints "nccl_calls: N calls on R ranks, right" and exits 0 when every
result is what the calls must give; 1 when one is not; 2 without a GPU
or NCCL.
"""
import os
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    sys.exit(f"nccl_calls: needs PyTorch ({e})")

MIB = 1 << 20


def main():
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("nccl_calls: needs a GPU and NCCL")
        return 2
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    second = dist.new_group(list(range(world)))
    ok, calls = True, 0

    def op(name, fn):
        nonlocal calls
        torch.cuda.nvtx.range_push("op")
        fn()
        torch.cuda.nvtx.range_pop()
        calls += 1

    for n in (MIB, 4 * MIB):
        for _ in range(3):
            x = torch.full((n // 4,), float(rank + 1), device="cuda")
            op("all_reduce", lambda: dist.all_reduce(x))
            ok &= bool(torch.all(x == world * (world + 1) / 2))
    b = torch.full((MIB // 4,), float(rank), device="cuda")
    op("broadcast", lambda: dist.broadcast(b, src=0))
    ok &= bool(torch.all(b == 0))
    part = torch.full((MIB // 4,), float(rank), device="cuda")
    whole = torch.empty(world * MIB // 4, device="cuda")
    op("all_gather", lambda: dist.all_gather_into_tensor(whole, part))
    ok &= bool(torch.all(whole.view(world, -1)[:, 0] == torch.arange(world, device="cuda")))
    full = torch.ones(world * MIB // 4, device="cuda")
    mine = torch.empty(MIB // 4, device="cuda")
    op("reduce_scatter", lambda: dist.reduce_scatter_tensor(mine, full))
    ok &= bool(torch.all(mine == world))
    if world >= 2:
        t = torch.full((2 * MIB // 4,), float(rank), device="cuda")
        if rank % 2 == 0 and rank + 1 < world:
            op("send", lambda: dist.send(t, rank + 1))
        elif rank % 2 == 1:
            op("recv", lambda: dist.recv(t, rank - 1))
            ok &= bool(torch.all(t == rank - 1))
        y = torch.ones(MIB // 4, device="cuda")
        op("all_reduce_second", lambda: dist.all_reduce(y, group=second))
        ok &= bool(torch.all(y == world))
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"nccl_calls: {calls} calls on {world} ranks, {'right' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
