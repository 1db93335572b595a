# A correct candidate for the upstream fixture's problem 2 (random inputs from the fixture's generator).
import torch
import torch.distributed as dist


def solution(x, weight, group=None):
    y = x * weight.unsqueeze(0)
    dist.all_reduce(y, group=group)
    return (y, x.float().pow(2).sum(1).sqrt())
