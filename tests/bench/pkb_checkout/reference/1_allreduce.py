# Fixture reference: the sum over ranks of each rank's tensor.
import torch.distributed as dist


def solution(tensor, group=None):
    out = tensor.clone()
    dist.all_reduce(out, group=group)
    return out
