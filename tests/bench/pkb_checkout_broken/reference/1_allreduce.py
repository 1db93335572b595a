# Fixture whose input generator cannot be imported (the judge must say so).
import torch.distributed as dist


def solution(tensor):
    dist.all_reduce(tensor)
    return tensor
