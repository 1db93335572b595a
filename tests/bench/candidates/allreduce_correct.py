# A correct all-reduce written differently from the reference: gather every rank's tensor, sum.
import torch
import torch.distributed as dist


def solution(tensor):
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.stack(parts).float().sum(0).to(tensor.dtype)
