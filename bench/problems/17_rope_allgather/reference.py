"""Rotary position embedding, then an all-gather along the sequence: rank r holds q and k (B, S, H, D) for its
S positions of the sequence, and cos and sin (B, S, D) for them. It rotates q and k (x * cos + rotate_half(x) *
sin, the same cos and sin for every head; rotate_half(x) = (-x2, x1) for the halves x1, x2 of the last
dimension), computed in the input dtype, and every rank returns the rotated q and k of all ranks concatenated
in rank order on the sequence: a tuple of two (B, W*S, H, D) tensors in the input dtype."""

from typing import Tuple

import torch
import torch.distributed as dist


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def _gather_sequence(x: torch.Tensor) -> torch.Tensor:
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, dim=1)


def solution(q_local: torch.Tensor, k_local: torch.Tensor, cos_local: torch.Tensor,
             sin_local: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    # One angle per position and dimension, shared by the heads.
    cos, sin = cos_local.unsqueeze(2), sin_local.unsqueeze(2)
    q = q_local * cos + _rotate_half(q_local) * sin
    k = k_local * cos + _rotate_half(k_local) * sin
    return _gather_sequence(q), _gather_sequence(k)
