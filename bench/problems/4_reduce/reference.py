"""Reduce: rank dst returns the elementwise sum of all ranks' (M, N) tensors; every other rank returns its
own input, unchanged."""

import torch
import torch.distributed as dist


def solution(tensor: torch.Tensor, dst: int = 0) -> torch.Tensor:
    # Reduce a copy: some backends overwrite the buffer on non-destination ranks too.
    out = tensor.clone()
    dist.reduce(out, dst=dst, op=dist.ReduceOp.SUM)
    if dist.get_rank() == dst:
        return out
    return tensor
