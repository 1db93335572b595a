"""A SwiGLU MLP with its weights sharded two ways: tensor parallel (TP) over the hidden units and FSDP over the
model dimension.

The W = n_tp * n_fsdp ranks form a grid, rank = fsdp index * n_tp + tp index; the TP group holds the n_tp ranks
of one FSDP index, the FSDP group the n_fsdp ranks of one TP index. Rank r holds x_local (B / n_fsdp, D), the rows
of its FSDP index (the same on its TP group), and its shards: W1_shard and W2_shard (D / n_fsdp, F / n_tp), the
rows of its FSDP index and the hidden columns of its TP index of W1, W2 (D, F), and W3_shard (F / n_tp, D / n_fsdp)
of W3 (F, D). It all-gathers its TP index's columns of W1, W2 (rows) and rows of W3 (columns) over the FSDP
group, computes (silu(x W1) * (x W2)) W3 for its hidden units, and sums over the TP group. Returns the
(B / n_fsdp, D) output in x's dtype.

tp_group and fsdp_group are the two groups of this rank; None builds them from n_tp and n_fsdp (once per grid)."""

from typing import Dict, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F

_GRIDS: Dict[Tuple[int, int], Tuple[dist.ProcessGroup, dist.ProcessGroup]] = {}


def _grid_groups(n_tp: int, n_fsdp: int) -> Tuple[dist.ProcessGroup, dist.ProcessGroup]:
    """This rank's (TP, FSDP) groups; every rank creates every group, in the same order (new_group is
    collective)."""
    if (n_tp, n_fsdp) not in _GRIDS:
        rank = dist.get_rank()
        mine = {}
        for block in range(n_fsdp):
            ranks = [block * n_tp + t for t in range(n_tp)]
            group = dist.new_group(ranks)
            if rank in ranks:
                mine["tp"] = group
        for t in range(n_tp):
            ranks = [block * n_tp + t for block in range(n_fsdp)]
            group = dist.new_group(ranks)
            if rank in ranks:
                mine["fsdp"] = group
        _GRIDS[(n_tp, n_fsdp)] = (mine["tp"], mine["fsdp"])
    return _GRIDS[(n_tp, n_fsdp)]


def _all_gather(shard: torch.Tensor, dim: int, group, parts: int) -> torch.Tensor:
    pieces = [torch.empty_like(shard) for _ in range(parts)]
    dist.all_gather(pieces, shard.contiguous(), group=group)
    return torch.cat(pieces, dim=dim)


@torch.no_grad()
def solution(x_local: torch.Tensor, W1_shard: torch.Tensor, W2_shard: torch.Tensor, W3_shard: torch.Tensor,
             n_tp: int, n_fsdp: int, tp_group: Optional[dist.ProcessGroup] = None,
             fsdp_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    if dist.get_world_size() != n_tp * n_fsdp:
        raise ValueError(f"the world of {dist.get_world_size()} ranks is not n_tp * n_fsdp = {n_tp} * {n_fsdp}")
    if tp_group is None or fsdp_group is None:
        tp_group, fsdp_group = _grid_groups(n_tp, n_fsdp)
    W1 = _all_gather(W1_shard, 0, fsdp_group, n_fsdp)
    W2 = _all_gather(W2_shard, 0, fsdp_group, n_fsdp)
    W3 = _all_gather(W3_shard, 1, fsdp_group, n_fsdp)
    y = (F.silu(x_local @ W1) * (x_local @ W2)) @ W3
    dist.all_reduce(y, op=dist.ReduceOp.SUM, group=tp_group)
    return y
