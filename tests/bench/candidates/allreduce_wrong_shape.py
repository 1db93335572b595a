# Wrong: returns only the first half of the columns.
import torch.distributed as dist


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out[:, : out.shape[1] // 2].contiguous()
