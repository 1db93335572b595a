"""All-reduce: every rank returns the elementwise sum of the (M, N) tensors of all ranks."""

import torch
import torch.distributed as dist


def solution(tensor: torch.Tensor) -> torch.Tensor:
    # Reduce into a copy so that the caller's input is left unchanged.
    out = tensor.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out
