"""An attention layer with Ulysses sequence parallelism: all-to-alls trade the sequence split for a head split
and back, around PKB's attention step, which mixes heads rather than tokens.

Rank r holds hidden_states (B, S, hidden), the r-th of W consecutive blocks of the sequence, and its own weights
w_qkv (3 * H * D, hidden) (q, k, v stacked, H = num_heads) and w_o (hidden, H * D). It projects its tokens to q,
k, v (B, S, H, D) (input dtype throughout), and all-to-alls them so that it holds heads r*H/W .. (r+1)*H/W - 1 of
all W * S tokens (k and v travel as one tensor, head by head). The attention step then works within each token:
with h = H / W, for every token the h x h scores q_i . k_j * D^-0.5 between the rank's heads i and j (causal:
j <= i) are softmaxed over j and weight the v_j (that is, q @ k^T on the (B, T, h, D) layout, as PKB computes
it). An all-to-all returns every token's heads to the rank holding the token, and w_o projects them. Returns
(B, S, hidden) in the input dtype. group None means the default group."""

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


def _attend_over_heads(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    """q, k, v (B, T, h, D): per token, softmax(q k^T * scale) v over its h heads."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if causal and q.shape[1] > 1:
        later = torch.ones(scores.shape[-1], scores.shape[-1], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(later, float("-inf"))
    return torch.matmul(F.softmax(scores, dim=-1), v)


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
    out = _attend_over_heads(q, k, v, head_dim ** -0.5, causal)
    if world > 1:
        out = _heads_to_sequence(out, group)
    return F.linear(out.reshape(B, S, -1), w_o)
