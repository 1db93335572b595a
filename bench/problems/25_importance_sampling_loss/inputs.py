"""Inputs for 25_importance_sampling_loss: per rank M tokens of an RL batch for a head of V words over N hidden
units. The weight (V, N) is normal with std 1/32 (1 / sqrt(N) at the default N) and the same on every rank (one
LM head, replicated). Each token's label is uniform in [0, V); a share of the tokens that is uniform in [0, 1/2)
per rank (responses of different lengths) are padding, labelled ignore_index = -100, so the valid-token counts
differ by rank and a rank cannot take the global count for W times its own. The advantages are normal with mean
0.5 and std 1.

PKB draws the hidden states and the weight standard normal and old_logprobs standard normal: the logits are ~30,
every label's log-probability is ~ -131, delta clamps at -20 and ratio is e^-20, so the loss (~2e-11) and the
per-token terms (~1e-9) lie far below any tolerance and zeros pass. Here the batch looks like one that a policy
sampled: each token's hidden state is a standard-normal vector plus the component along its label's weight row
that sets the label's logit to log(V) + U(-3, 3) (log-probabilities in about [-3, -0.05]), and old_logprobs is an
estimate of the new log-probability (from that logit, the hidden state's norm and V) plus N(0, 0.4) noise, shifted
by a lag that is uniform in [-1, 1) per rank (ranks whose rollouts came from older policies), at most 0:
ratios lie in about [0.1, 10], so every output and metric moves with the data and the local means differ by rank.
The clamp at +-20 never binds here, as in a healthy run."""

import math

import torch

IGNORE_INDEX = -100
MAX_PADDING = 0.5
WEIGHT_STD = 1 / 32


def make_inputs(ctx, M, N, V):
    f32 = torch.float32
    weight = ctx.randn((V, N), "weight", same_on="world", std=WEIGHT_STD)
    labels = ctx.randint((M,), "labels", 0, V)
    padding = ctx.rand((1,), "padding_share", dtype=f32, high=MAX_PADDING)
    valid = ctx.rand((M,), "padding", dtype=f32) >= padding

    # The label's logit h . w_label set to `target` for valid tokens: add (target - g . w) w / |w|^2 to g.
    rows = weight.index_select(0, labels).to(f32)
    g = ctx.randn((M, N), "hidden", dtype=f32)
    target = math.log(V) + ctx.rand((M,), "confidence", dtype=f32, low=-3.0, high=3.0)
    shift = torch.where(valid, (target - (g * rows).sum(1)) / rows.square().sum(1), 0.0)
    hidden = (g + shift[:, None] * rows).to(ctx.dtype)

    # The other V - 1 logits are ~N(0, s^2), s = |h| * WEIGHT_STD: their exponentials add up to ~(V - 1) e^(s^2/2).
    h = hidden.to(f32)
    label_logit = (h * rows).sum(1)
    spread = h.square().sum(1) * WEIGHT_STD ** 2
    estimate = label_logit - torch.logaddexp(label_logit, math.log(V - 1) + spread / 2)
    lag = ctx.rand((1,), "lag", dtype=f32, low=-1.0, high=1.0)
    old = (estimate - lag + ctx.randn((M,), "old_noise", dtype=f32, std=0.4)).clamp(max=0.0)

    return (hidden, weight, torch.where(valid, labels, IGNORE_INDEX), old.to(ctx.dtype),
            ctx.randn((M,), "advantages", mean=0.5), IGNORE_INDEX)
