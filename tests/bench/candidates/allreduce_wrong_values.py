# Wrong: adds one to the sum on rank 1 only.
import torch.distributed as dist


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    if dist.get_rank() == 1:
        out += 1
    return out
