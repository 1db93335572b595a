# Defines the function under the wrong name.
import torch.distributed as dist


def solve(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out
