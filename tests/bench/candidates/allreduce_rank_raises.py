# Fails: rank 1 raises before the collective, so rank 0 is left waiting in it.
import torch.distributed as dist


def solution(tensor):
    if dist.get_rank() == 1:
        raise RuntimeError("deliberate failure on rank 1")
    out = tensor.clone()
    dist.all_reduce(out)
    return out
