"""Inputs for 74_fla_kimi_delta_attention_cp_tp, as PKB builds them: a mesh of cp x tp ranks with tp = 2 at
W >= 4 and tp = 1 at W = 2 (PKB passes no TP group there; ours has one rank, which the reference treats the
same). Per rank its block of S tokens of a batch of B: q, k (B, S, H, K), v (B, S, H, V), g (B, S, H, K) and
beta (B, S, H), standard normal and the rank's own; a_log = linspace(-0.1, 0.1, H) and dt_bias =
linspace(-0.1, 0.1, H * K) in bf16, the same everywhere. Then the CP and TP groups."""

import torch


def make_inputs(ctx, B, S, H, K, V):
    a_log = torch.linspace(-0.1, 0.1, H, dtype=torch.bfloat16, device=ctx.device).to(ctx.dtype)
    dt_bias = torch.linspace(-0.1, 0.1, H * K, dtype=torch.bfloat16, device=ctx.device).to(ctx.dtype)
    return (ctx.randn((B, S, H, K), "q"), ctx.randn((B, S, H, K), "k"), ctx.randn((B, S, H, V), "v"),
            ctx.randn((B, S, H, K), "g"), ctx.randn((B, S, H), "beta"), a_log, dt_bias,
            ctx.groups["cp"], ctx.groups["tp"])
