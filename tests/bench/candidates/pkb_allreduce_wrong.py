# A wrong candidate for the upstream fixture's problem 1: it forgets rank 0's contribution.
import torch.distributed as dist


def solution(tensor, group=None):
    out = tensor.clone()
    dist.all_reduce(out, group=group)
    if dist.get_rank() == 0:
        out -= tensor
    return out
