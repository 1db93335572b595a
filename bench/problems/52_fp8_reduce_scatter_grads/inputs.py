"""Inputs for 52_fp8_reduce_scatter_grads, sized as PKB's: P = clamp(64*M, 64, 4096); per rank a
standard-normal flat gradient (W*P,), different on every rank, trial and seed, and an amax history (16,) in
bf16 drawn uniform in [0, 8) (below 8 after rounding), also per rank. PKB fills the history with 1e-8, so only
the newest entry carries information: a candidate that neither rolls the history nor reads it passed."""

import torch


def make_inputs(ctx, M):
    P = max(64, min(64 * M, 4096))
    history = ctx.rand((16,), "amax_history", dtype=torch.bfloat16, low=0.0, high=8.0).clamp(max=7.984375)
    return (ctx.randn((ctx.world * P,), "grads"), history)
