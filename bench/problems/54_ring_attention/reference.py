"""Causal ring attention over a context-parallel group.

Rank r holds q, k and v (B, S, H, D): the r-th of W consecutive blocks of a sequence of W * S tokens, every head.
The K and V blocks travel around the ring of the group; rank r attends with its queries to the blocks of ranks
0..r (causal: the blocks after its own are skipped, and its own block is masked causally), each block's partial
output and log-sum-exp computed in float32 and merged by their log-sum-exp. Without causal every block counts.
Returns rank r's attention output (B, S, H, D) in q's dtype. softmax_scale None means 1 / sqrt(D); group None
means the default group."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _attend(q, k, v, scale: float, causal: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """q against one K/V block, in float32: the output (B, S, H, D) and the log-sum-exp per query (B, H, S)."""
    qh, kh, vh = (t.transpose(1, 2).float() for t in (q, k, v))
    scores = (qh @ kh.transpose(-1, -2)) * scale
    if causal:
        future = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).triu(diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ vh).transpose(1, 2), torch.logsumexp(scores, dim=-1)


def _combine(acc, acc_lse, part, part_lse):
    """Folds one block's (output, lse) into the running pair; lse is kept as (B, S, H, 1) beside the output."""
    part_lse = part_lse.transpose(1, 2).unsqueeze(-1)
    if acc is None:
        return part, part_lse
    # acc' = (e^acc_lse * acc + e^part_lse * part) / (e^acc_lse + e^part_lse), written without overflow.
    weight = torch.sigmoid(part_lse - acc_lse)
    return acc + weight * (part - acc), acc_lse - F.logsigmoid(acc_lse - part_lse)


def solution(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: Optional[float] = None,
             causal: bool = False, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    scale = float(softmax_scale) if softmax_scale is not None else q.shape[-1] ** -0.5
    ring, me = dist.get_world_size(group), dist.get_rank(group)
    successor = dist.get_global_rank(group, (me + 1) % ring)
    predecessor = dist.get_global_rank(group, (me - 1) % ring)
    k, v = k.contiguous(), v.contiguous()
    out = lse = None
    for step in range(ring):
        # At step s this rank holds the block of rank me - s; the next one is on its way meanwhile.
        pending = None
        if step < ring - 1:
            incoming_k, incoming_v = torch.empty_like(k), torch.empty_like(v)
            pending = dist.batch_isend_irecv([
                dist.P2POp(dist.isend, k, successor, group=group),
                dist.P2POp(dist.irecv, incoming_k, predecessor, group=group),
                dist.P2POp(dist.isend, v, successor, group=group),
                dist.P2POp(dist.irecv, incoming_v, predecessor, group=group),
            ])
        if not causal or step <= me:
            out, lse = _combine(out, lse, *_attend(q, k, v, scale, causal and step == 0))
        if pending is not None:
            for request in pending:
                request.wait()
            k, v = incoming_k, incoming_v
    return out.to(q.dtype)
