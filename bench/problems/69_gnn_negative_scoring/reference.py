"""Negative-sampling evaluation of a GNN link predictor: every rank holds P_r positive-edge scores (P_r,) and
for each of them Q negative scores (P_r, Q). Every rank receives all ranks' scores (in rank order) and returns,
for every positive of every rank, its 1-based rank among its own Q + 1 candidates (itself and its negatives)
when sorted by sigmoid(score) from the largest: an int64 tensor (sum of P_r,), the same on every rank. Ties
between equal sigmoids may be ordered either way."""

from typing import Optional

import torch
import torch.distributed as dist


def _all_ranks_rows(data: torch.Tensor, group) -> torch.Tensor:
    """Every rank's rows of `data`, concatenated in rank order (ranks may hold different numbers of rows)."""
    world = dist.get_world_size(group)
    if world == 1:
        return data
    counts = torch.zeros(world, dtype=torch.long, device=data.device)
    counts[dist.get_rank(group)] = data.shape[0]
    dist.all_reduce(counts, op=dist.ReduceOp.SUM, group=group)
    receive = counts.to("cpu").tolist()
    # Each rank sends its whole data to every rank: one copy per destination.
    send = data.repeat(world, *([1] * (data.dim() - 1))).contiguous()
    out = torch.empty((sum(receive), *data.shape[1:]), dtype=data.dtype, device=data.device)
    dist.all_to_all_single(out, send, output_split_sizes=receive, input_split_sizes=[data.shape[0]] * world,
                           group=group)
    return out


@torch.no_grad()
def solution(local_pos_scores: torch.Tensor, local_neg_scores: torch.Tensor,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    pos = _all_ranks_rows(local_pos_scores, group)
    neg = _all_ranks_rows(local_neg_scores, group)
    scores = torch.sigmoid(torch.cat([pos.view(-1, 1), neg], dim=1))
    order = torch.sort(scores, dim=1, descending=True).indices
    # The positive is candidate 0 of its row: its rank is where 0 landed in the order.
    return torch.nonzero(order == 0)[:, 1] + 1
