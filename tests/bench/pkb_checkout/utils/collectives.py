"""A helper module that fixture solutions import as `utils.collectives`, as PKB solutions import
`utils.cuda_helpers` from their checkout."""
import torch
import torch.distributed as dist


def sum_by_gather(t):
    parts = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t)
    return torch.stack(parts).float().sum(0).to(t.dtype)
