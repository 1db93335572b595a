"""Ulysses all-gather into one tensor: rank r returns the inputs of all ranks of the group concatenated on
dimension 0 in rank order, (W*M, N) for (M, N) inputs, in the input dtype, the same on every rank. group None
means the default group."""

from typing import Optional

import torch
import torch.distributed as dist


def solution(x: torch.Tensor, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    if world == 1:
        return x.contiguous()
    out = x.new_empty((world * x.shape[0], *x.shape[1:]))
    dist.all_gather_into_tensor(out, x.contiguous(), group=group)
    return out
