"""Inputs for 75_fla_gated_deltanet_cp, as PKB builds them: per rank its block of S tokens of a batch of B,
with H = H rounded up to a multiple of W query, key and value heads: q, k (B, S, H, K), v (B, S, H, V) and gate
(B, S, H) standard normal, beta (B, S, H) the sigmoid of standard normal values, all the rank's own; and its
share of the per-head constants, a_log = linspace(0, 0.2, H) and dt_bias = linspace(-0.1, 0.1, H) (in bf16, as
PKB), heads r*H/W .. (r+1)*H/W - 1. Then group None."""

import torch


def make_inputs(ctx, B, S, H, K, V):
    heads = (H + ctx.world - 1) // ctx.world * ctx.world
    mine = slice(ctx.rank * heads // ctx.world, (ctx.rank + 1) * heads // ctx.world)
    a_log = torch.linspace(0.0, 0.2, heads, dtype=torch.bfloat16, device=ctx.device)[mine].to(ctx.dtype)
    dt_bias = torch.linspace(-0.1, 0.1, heads, dtype=torch.bfloat16, device=ctx.device)[mine].to(ctx.dtype)
    beta = torch.sigmoid(ctx.randn((B, S, heads), "beta", dtype=torch.bfloat16)).to(ctx.dtype)
    return (ctx.randn((B, S, heads, K), "q"), ctx.randn((B, S, heads, K), "k"), ctx.randn((B, S, heads, V), "v"),
            ctx.randn((B, S, heads), "gate"), beta, a_log.contiguous(), dt_bias.contiguous(), None)
