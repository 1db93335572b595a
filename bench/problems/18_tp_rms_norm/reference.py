"""Tensor-parallel RMSNorm: the hidden dimension of the activations is split across ranks, rank r holding
columns r*N .. (r+1)*N - 1 of every row and the matching slice of the weight. Each rank returns its slice of

    y = weight * (x / sqrt(mean(x**2 over the full hidden dimension) + eps))

with the statistics computed in float32, shape (M, N)."""

import torch
import torch.distributed as dist


def solution(local_hidden_states: torch.Tensor, local_weight: torch.Tensor, variance_epsilon: float) -> torch.Tensor:
    world = dist.get_world_size()
    input_dtype = local_hidden_states.dtype
    x = local_hidden_states.to(torch.float32)
    # Sum of squares over this rank's columns, then over all ranks: one float32 per row.
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq, op=dist.ReduceOp.SUM)
    variance = sum_sq / (x.shape[-1] * world)
    x = x * torch.rsqrt(variance + variance_epsilon)
    return local_weight * x.to(input_dtype)
