#!/usr/bin/env python3
"""two_groups: four ranks in two families of NCCL process groups, as a
tensor- and data-parallel job has them (issue 42: collectives matched per
communicator, where stream i of two ranks is not one communicator).

    python3 -m torch.distributed.run --nproc_per_node=4 two_groups.py

Rank r runs on GPU r mod (the GPUs there are), so that on two GPUs every
NCCL communicator joins two GPUs (NCCL refuses two ranks of one
communicator on one GPU) and two processes share each GPU. The world
group is gloo's (it runs no CUDA collective); the NCCL groups:
  - "tensor" groups {0,1} and {2,3}: two all-reduces of 1 MiB a step;
  - "data" groups {0,3} and {1,2}: one all-reduce of 256 KiB a step, and
    group {0,3} a second one (its ranks' data is uneven), so that the
    ranks do not run as many collectives on their second stream.
Each step is an NVTX range "step", STEPS of them.

Matched by communicator, each group's collectives are its own: STEPS x
(2 + 2 + 2 + 1) = 7 STEPS collectives of two ranks each. Matched by
stream position (no NCCL payloads), rank 0's second stream holds 2 STEPS
collectives and rank 1's STEPS: they cannot be matched.

Prints "two_groups: S steps on 4 ranks, right" and exits 0 when every
all-reduce's result is its group's sum; 1 when not; 2 without four ranks,
a GPU or NCCL.
"""
import os
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    sys.exit(f"two_groups: needs PyTorch ({e})")

MIB, STEPS = 1 << 20, 6
TENSOR = ([0, 1], [2, 3])
DATA = ([0, 3], [1, 2])


def main():
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("two_groups: needs a GPU and NCCL")
        return 2
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dev = torch.device("cuda", torch.cuda.current_device())
    # No device_id: each NCCL communicator is made at its group's first
    # collective, between its two ranks alone (a world communicator of
    # four ranks on two GPUs NCCL would refuse).
    dist.init_process_group("cpu:gloo,cuda:nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    if world != 4:
        print("two_groups: needs four ranks")
        return 2
    groups = {}
    for family, members in (("tensor", TENSOR), ("data", DATA)):
        for ranks in members:  # every rank makes every group, in one order
            g = dist.new_group(ranks, backend="nccl")
            if rank in ranks:
                groups[family] = (g, ranks)
    ok = True
    for _ in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        g, ranks = groups["tensor"]
        for _ in range(2):
            x = torch.full((MIB // 4,), float(rank + 1), device=dev)
            dist.all_reduce(x, group=g)
            ok &= bool(torch.all(x == sum(r + 1 for r in ranks)))
        g, ranks = groups["data"]
        for _ in range(2 if ranks == DATA[0] else 1):
            y = torch.full((MIB // 16,), float(10 * rank), device=dev)
            dist.all_reduce(y, group=g)
            ok &= bool(torch.all(y == sum(10 * r for r in ranks)))
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"two_groups: {STEPS} steps on {world} ranks, {'right' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
