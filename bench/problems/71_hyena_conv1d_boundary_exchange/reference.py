"""Depthwise causal 1-D convolution (Hyena's short filter) over a sequence split in zigzag order, with a halo
exchange between neighbouring ranks.

The sequence is cut into 2W chunks of L tokens; rank r holds chunks r and 2W-1-r side by side: x (B, C, 2L).
weight (C, 1, K) is one causal filter per channel: y[t] = sum_j weight[c, 0, j] * x[t + j - (K-1)], with zeros
before the first token. Each chunk needs the last K-1 tokens of the chunk before it: for chunk r they come from
rank r-1's first chunk (zeros on rank 0), for chunk 2W-1-r from rank r+1's second chunk (on rank W-1 from its own
first chunk, chunk W-1). Returns rank r's output (B, C, 2L), its two chunks in the same layout, in x's dtype.
group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


@torch.no_grad()
def solution(x: torch.Tensor, weight: torch.Tensor, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    ranks = dist.get_process_group_ranks(group)
    me, size = dist.get_rank(group), len(ranks)
    B, C, two_chunks = x.shape
    L, halo = two_chunks // 2, weight.shape[-1] - 1
    front, back = x[..., :L], x[..., L:]
    front_tail = front[..., L - halo:].contiguous()  # needed by the next rank's front chunk
    back_tail = back[..., L - halo:].contiguous()    # needed by the previous rank's back chunk

    ops = []
    before_front = before_back = None
    if me > 0:
        before_front = torch.empty_like(front_tail)
        ops += [dist.P2POp(dist.irecv, before_front, ranks[me - 1], group),
                dist.P2POp(dist.isend, back_tail, ranks[me - 1], group)]
    if me < size - 1:
        before_back = torch.empty_like(back_tail)
        ops += [dist.P2POp(dist.isend, front_tail, ranks[me + 1], group),
                dist.P2POp(dist.irecv, before_back, ranks[me + 1], group)]
    if ops:
        for request in dist.batch_isend_irecv(ops):
            request.wait()
    if before_front is None:  # the first chunk of the sequence: zeros before it
        before_front = torch.zeros_like(front_tail)
    if before_back is None:   # chunk W comes right after this rank's own chunk W-1
        before_back = front_tail

    # Both chunks with their halos as one batch of 2B sequences through one grouped convolution.
    padded = torch.cat([torch.cat([before_front, front], dim=-1), torch.cat([before_back, back], dim=-1)], dim=0)
    y = F.conv1d(padded, weight, groups=C)
    return torch.cat([y[:B], y[B:]], dim=-1)
