"""Inputs for 24_load_balancing_loss_fn: per rank router logits (M, 8) for M tokens and 8 experts, num_experts 8,
top_k 2 and no attention mask, as PKB passes them.

PKB draws the logits standard normal on every rank. Then every rank's loss is within ~0.1% of 2.0, below the
bf16 rounding of the routing probabilities, so a rank that returns its own loss without averaging passes. Here
each rank's router prefers some experts, as routers do on skewed data: the logits are standard normal plus a
per-expert bias of zero mean and unit variance (overall std sqrt(2)), and the shape of the bias depends on the
rank's parity: even ranks favour one expert (sqrt(7) against -1/sqrt(7) for the others), odd ranks favour four
(+1 against -1). Which experts is a random permutation per rank and call. The two shapes give losses ~5.4 and
~3.3, so the mean over ranks is far from each rank's own."""

import math

import torch

EXPERTS = 8


def _expert_bias(ctx):
    if ctx.rank % 2 == 0:
        lead = math.sqrt(EXPERTS - 1)
        pattern = torch.tensor([lead] + [-1.0 / lead] * (EXPERTS - 1))
    else:
        pattern = torch.tensor([1.0] * (EXPERTS // 2) + [-1.0] * (EXPERTS // 2))
    order = torch.randperm(EXPERTS, generator=ctx.generator("expert_order"))
    return pattern[order].to(ctx.device)


def make_inputs(ctx, M):
    logits = ctx.randn((M, EXPERTS), "gate_logits", dtype=torch.float32) + _expert_bias(ctx)
    return (logits.to(ctx.dtype), EXPERTS, 2, None)
