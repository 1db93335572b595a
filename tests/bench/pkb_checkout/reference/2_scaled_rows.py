# Fixture reference: each row scaled by a per-column weight, summed over ranks, plus the local row norms.
import torch
import torch.distributed as dist


def solution(x, weight, group=None):
    y = x * weight
    dist.all_reduce(y, group=group)
    return y, torch.linalg.vector_norm(x.float(), dim=1)
