"""Gated DeltaNet (the gated delta-rule linear attention of flash-linear-attention) under context parallelism
by head: an all-to-all trades sequence for heads, every rank runs the recurrence over the whole sequence for its
share of the heads, and a second all-to-all trades back.

Rank r holds the r-th of W consecutive blocks of the sequence for all heads: q, k (B, S, Hq, K), v (B, S, H, V),
gate and beta (B, S, H) (beta already in (0, 1)); and, for its own share of H / W value heads, a_log and
dt_bias (H / W,). Per value head (query and key heads repeated over H / Hq value heads each), in float32:
q and k are L2-normalised (eps 1e-6), q scaled by 1 / sqrt(K); the decay is exp(-exp(a_log) * softplus(gate +
dt_bias)); with the state S (K, V) starting at zero, each step t does S <- decay_t * S, then S <- S + k_t (beta_t
(v_t - k_t S)), and outputs q_t S. Returns rank r's block of the output for every head, (B, S, H, V) in q's
dtype. group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _sequence_to_heads(x: torch.Tensor, group) -> torch.Tensor:
    """(B, S, H, ...) blocks of the sequence, all heads -> (B, W*S, H/W, ...): the whole sequence, this rank's
    share of the heads."""
    world = dist.get_world_size(group)
    B, S, H = x.shape[:3]
    rest = x.shape[3:]
    send = x.reshape(B, S, world, H // world, *rest).movedim(2, 0).contiguous()  # piece j: heads of rank j
    received = torch.empty_like(send)  # piece j: sequence block of rank j
    dist.all_to_all_single(received, send, group=group)
    return received.movedim(0, 1).reshape(B, world * S, H // world, *rest)


def _heads_to_sequence(x: torch.Tensor, group) -> torch.Tensor:
    """The inverse: (B, W*S, H/W, ...) -> (B, S, H, ...)."""
    world = dist.get_world_size(group)
    B, T, h = x.shape[:3]
    rest = x.shape[3:]
    send = x.reshape(B, world, T // world, h, *rest).movedim(1, 0).contiguous()  # piece j: sequence block j
    received = torch.empty_like(send)  # piece j: heads of rank j
    dist.all_to_all_single(received, send, group=group)
    return received.movedim(0, 2).reshape(B, T // world, world * h, *rest)


def _gated_delta_rule(q, k, v, gate, beta, a_log, dt_bias) -> torch.Tensor:
    B, T, Hq, K = q.shape
    H, V = v.shape[2], v.shape[3]
    q = F.normalize(q.float(), p=2, dim=-1, eps=1e-6).repeat_interleave(H // Hq, dim=2) * K ** -0.5
    k = F.normalize(k.float(), p=2, dim=-1, eps=1e-6).repeat_interleave(H // Hq, dim=2)
    decay = torch.exp(-a_log.float().exp() * F.softplus(gate.float() + dt_bias.float()))
    # One row per (batch, head): (B*H, T, ...).
    rows = lambda t: t.transpose(1, 2).reshape(B * H, T, *t.shape[3:])  # noqa: E731
    q, k, v, decay, beta = rows(q), rows(k), rows(v.float()), rows(decay), rows(beta.float())
    state = torch.zeros(B * H, K, V, dtype=torch.float32, device=q.device)
    out = torch.empty(B * H, T, V, dtype=torch.float32, device=q.device)
    for t in range(T):
        state = state * decay[:, t, None, None]
        k_t = k[:, t]
        correction = (v[:, t] - torch.bmm(k_t.unsqueeze(1), state).squeeze(1)) * beta[:, t, None]
        state = state + k_t.unsqueeze(-1) * correction.unsqueeze(1)
        out[:, t] = torch.bmm(q[:, t].unsqueeze(1), state).squeeze(1)
    return out.reshape(B, H, T, V).transpose(1, 2)


@torch.no_grad()
def solution(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor, beta: torch.Tensor,
             a_log: torch.Tensor, dt_bias: torch.Tensor, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    q, k, v = (_sequence_to_heads(t, group) for t in (q, k, v))
    gate, beta = (_sequence_to_heads(t.unsqueeze(-1), group).squeeze(-1) for t in (gate, beta))
    out = _gated_delta_rule(q, k, v, gate, beta, a_log, dt_bias).to(q.dtype)
    return _heads_to_sequence(out.contiguous(), group)
