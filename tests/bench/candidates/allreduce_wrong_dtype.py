# Wrong: right values, but float32 instead of the input's bfloat16.
import torch.distributed as dist


def solution(tensor):
    out = tensor.float()
    dist.all_reduce(out)
    return out
