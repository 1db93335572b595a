"""Kimi Delta Attention (KDA, flash-linear-attention's gated delta rule with a decay per key channel) under
context parallelism by all-gather, on a cp x tp mesh.

Rank r holds its block of S tokens of the sequence (block c of its CP group, in CP-rank order): q, k (B, S, H,
K), v (B, S, H, V), g (B, S, H, K) and beta (B, S, H); a_log (H,) and dt_bias (H * K,) are the same everywhere.
It gathers the whole sequence of its CP group and runs, in float32 per batch and head: q, k L2-normalised, q
scaled by 1 / sqrt(K); decay = exp(-5 * sigmoid(exp(a_log) * (g + dt_bias))) per key channel; beta =
sigmoid(beta); the state S (K, V) from zero, each step S <- decay_t[:, None] * S, S <- S + k_t (beta_t (v_t - k_t
S)), output q_t S, rounded to the input dtype. The outputs are summed over tp_group (when it has more than one
rank), and rank r keeps its own block: (B, S, H, V) in q's dtype. cp_group None means the default group,
tp_group None no sum."""

from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _gather_sequence(x: torch.Tensor, group) -> torch.Tensor:
    """Every CP rank's (B, S, ...) block, joined along the sequence in rank order: (B, W*S, ...)."""
    world = dist.get_world_size(group)
    token_major = x.transpose(0, 1).contiguous()  # (S, B, ...): the blocks join along dim 0
    whole = torch.empty((world * token_major.shape[0], *token_major.shape[1:]), dtype=x.dtype, device=x.device)
    dist.all_gather_into_tensor(whole, token_major, group=group)
    return whole.transpose(0, 1)


def _kda(q, k, v, g, beta, a_log, dt_bias, lower_bound: float) -> torch.Tensor:
    B, T, H, K = q.shape
    V = v.shape[-1]
    gate = a_log.float().exp().view(1, 1, H, 1) * (g.float() + dt_bias.float().view(H, K))
    decay = torch.exp(lower_bound * torch.sigmoid(gate))
    q = F.normalize(q.float(), p=2, dim=-1) * K ** -0.5
    k = F.normalize(k.float(), p=2, dim=-1)
    rows = lambda t: t.transpose(1, 2).reshape(B * H, T, *t.shape[3:])  # noqa: E731 - one row per (batch, head)
    q, k, v, decay, beta = rows(q), rows(k), rows(v.float()), rows(decay), rows(beta.float().sigmoid())
    state = torch.zeros(B * H, K, V, dtype=torch.float32, device=q.device)
    out = torch.empty(B * H, T, V, dtype=torch.float32, device=q.device)
    for t in range(T):
        state = decay[:, t].unsqueeze(-1) * state
        k_t = k[:, t]
        correction = (v[:, t] - torch.bmm(k_t.unsqueeze(1), state).squeeze(1)) * beta[:, t, None]
        state = state + k_t.unsqueeze(-1) * correction.unsqueeze(1)
        out[:, t] = torch.bmm(q[:, t].unsqueeze(1), state).squeeze(1)
    return out.reshape(B, H, T, V).transpose(1, 2)


@torch.no_grad()
def solution(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
             a_log: torch.Tensor, dt_bias: torch.Tensor, cp_group: Optional[dist.ProcessGroup] = None,
             tp_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    cp_group = cp_group or dist.group.WORLD
    cp, me = dist.get_world_size(cp_group), dist.get_rank(cp_group)
    if cp > 1:
        q, k, v, g, beta = (_gather_sequence(t, cp_group) for t in (q, k, v, g, beta))
    S = q.shape[1] // cp
    out = _kda(q, k, v, g, beta, a_log, dt_bias, lower_bound=-5.0).to(q.dtype).contiguous()
    if tp_group is not None and dist.get_world_size(tp_group) > 1:
        dist.all_reduce(out, op=dist.ReduceOp.SUM, group=tp_group)
    return out[:, me * S:(me + 1) * S].contiguous()
