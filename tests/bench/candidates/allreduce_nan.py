# Wrong: one NaN in the output.
import torch.distributed as dist


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    out[3, 7] = float("nan")
    return out
