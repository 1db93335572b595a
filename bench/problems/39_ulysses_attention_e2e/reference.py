"""An attention layer with Ulysses sequence parallelism: an all-to-all trades the sequence split for a head split,
every rank attends over the whole sequence for its heads, and the inverse all-to-all trades back.

Rank r holds hidden_states (B, S, hidden), the r-th of W consecutive blocks of the sequence (T = W * S tokens),
and its own weights w_qkv (3 * H * D, hidden) (q, k, v stacked, H = num_heads) and w_o (hidden, H * D). It
projects its tokens to q, k, v (B, S, H, D) (input dtype throughout), and all-to-alls them so that it holds heads
r*H/W .. (r+1)*H/W - 1 of all T tokens (k and v travel as one tensor, head by head); every token keeps the q, k and
v its own rank's weights made. Then, for each of those heads, every token attends to the tokens of the whole
sequence: softmax over j of q_i . k_j * D^-0.5 (causal: j <= i, positions counted over the whole sequence)
weighting v_j. The inverse all-to-all returns every token's heads to the rank holding the token, and w_o projects
them. Returns (B, S, hidden) in the input dtype. group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _sequence_to_heads(x: torch.Tensor, group) -> torch.Tensor:
    """(B, S, H', D): this rank's tokens, all heads -> (B, W*S, H'/W, D): all tokens, this rank's heads."""
    world = dist.get_world_size(group)
    B, S, H, D = x.shape
    send = x.reshape(B, S, world, H // world, D).movedim(2, 0).contiguous()  # piece j: the heads of rank j
    got = torch.empty_like(send)                                             # piece j: the tokens of rank j
    dist.all_to_all_single(got, send, group=group)
    return got.movedim(0, 1).reshape(B, world * S, H // world, D)


def _heads_to_sequence(x: torch.Tensor, group) -> torch.Tensor:
    """(B, W*S, h, D) -> (B, S, W*h, D): this rank's tokens, every rank's heads."""
    world = dist.get_world_size(group)
    B, T, h, D = x.shape
    send = x.reshape(B, world, T // world, h, D).movedim(1, 0).contiguous()  # piece j: the tokens of rank j
    got = torch.empty_like(send)                                            # piece j: the heads of rank j
    dist.all_to_all_single(got, send, group=group)
    return got.movedim(0, 2).reshape(B, T // world, world * h, D)


def _attend_over_sequence(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    """q, k, v (B, T, h, D): per head, softmax(q k^T * scale) v over the T tokens; returns (B, T, h, D)."""
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, h, T, D)
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale  # (B, h, T, T): query i, key j
    if causal:
        T = scores.shape[-1]
        later = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(later, float("-inf"))
    return torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2)


def solution(hidden_states: torch.Tensor, w_qkv: torch.Tensor, w_o: torch.Tensor,
             group: Optional[dist.ProcessGroup] = None, num_heads: int = 8, causal: bool = False) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    B, S, _ = hidden_states.shape
    head_dim = w_qkv.shape[0] // 3 // num_heads
    if num_heads % world:
        raise ValueError(f"num_heads={num_heads} heads do not split over {world} ranks")
    q, k, v = F.linear(hidden_states, w_qkv).view(B, S, 3, num_heads, head_dim).unbind(dim=2)
    if world > 1:
        q = _sequence_to_heads(q, group)
        kv = _sequence_to_heads(torch.stack([k, v], dim=3).reshape(B, S, 2 * num_heads, head_dim), group)
        kv = kv.view(B, kv.shape[1], num_heads // world, 2, head_dim)
        k, v = kv[:, :, :, 0], kv[:, :, :, 1]
    out = _attend_over_sequence(q, k, v, head_dim ** -0.5, causal)
    if world > 1:
        out = _heads_to_sequence(out, group)
    return F.linear(out.reshape(B, S, -1), w_o)
