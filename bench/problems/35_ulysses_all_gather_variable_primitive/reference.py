"""Ulysses all-gather of tensors whose sizes may differ by rank: the ranks of the group first exchange their
tensors' shapes, then the tensors; rank r returns all ranks' tensors concatenated along gather_dim in rank
order, in the input dtype, the same on every rank ((W*M, N) for (M, N) inputs and gather_dim 0). group None
means the default group."""

from typing import Optional

import torch
import torch.distributed as dist


def solution(x: torch.Tensor, gather_dim: int, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    if world == 1:
        return x.contiguous()
    x = x.contiguous()
    # Every rank's shape, so that each receive buffer has the sender's size.
    shape = torch.tensor(list(x.shape), dtype=torch.int64, device=x.device)
    shapes = [torch.empty_like(shape) for _ in range(world)]
    dist.all_gather(shapes, shape, group=group)
    parts = [x.new_empty(tuple(s.tolist())) for s in shapes]
    dist.all_gather(parts, x, group=group)
    return torch.cat(parts, dim=gather_dim)
