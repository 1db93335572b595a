"""A 2-D convolution over an image split by rows across the ranks, with a halo exchange of boundary rows.

Rank r holds rows r*h .. (r+1)*h - 1 of one image of W*h rows: x (B, C_in, h, X). The convolution (weight
(C_out, C_in, k, k), bias (C_out,) or None, the given stride, padding p on all four sides of the whole image)
needs the p rows beyond each edge of the shard: rank r takes the last p rows of rank r-1 and the first p rows of
rank r+1 (every rank's boundary rows are gathered on every rank), zeros beyond the image's first and last rows,
and pads the width itself. Returns rank r's output rows (B, C_out, (h + 2p - k) / stride + 1, (X + 2p - k) /
stride + 1) in x's dtype. With padding 0 or a single rank nothing is exchanged. group None means the default
group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


@torch.no_grad()
def solution(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], stride: int = 1,
             padding: int = 1, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    size, me = dist.get_world_size(group), dist.get_rank(group)
    p = int(padding)
    if p == 0 or size == 1:
        return F.conv2d(x, weight, bias, stride=stride, padding=p)

    # Every rank's first and last p rows, stacked as (2, B, C, p, X), gathered from every rank.
    edges = torch.stack([x[:, :, :p], x[:, :, -p:]]).contiguous()
    everyone = [torch.empty_like(edges) for _ in range(size)]
    dist.all_gather(everyone, edges, group=group)
    no_rows = x.new_zeros(x.shape[0], x.shape[1], p, x.shape[3])
    above = everyone[me - 1][1] if me > 0 else no_rows
    below = everyone[me + 1][0] if me < size - 1 else no_rows
    return F.conv2d(torch.cat([above, x, below], dim=2), weight, bias, stride=stride, padding=(0, p))
