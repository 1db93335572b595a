"""Inputs for 58_openclip_contrastive_loss: per rank B = M / W samples of D = max(16, N) features, image and
text features each normalised to unit length, logit_scale 10, logit_bias -10 and group None, as PKB.

Where we differ: PKB draws independent standard-normal features, whose cosines are ~0.03, so every pair of
different samples has a logit near -10 and adds ~5e-5 to the loss: the blocks of the other ranks together add
less than half a bf16 ulp of the ~10 loss, and the loss of the rank's own block alone equals the full loss.
Here every feature row is g * c + z, normalised, with c a direction shared by all ranks, z the row's own standard
normal noise, and g a gain in [1, 3) drawn per rank (one for its images, one for its texts): two rows' cosine is
about g_i g_t / sqrt((g_i^2 + 1)(g_t^2 + 1)), between 0.5 and 0.9: the other ranks' blocks make up about half
of the loss at W = 2 and 75-90% at W = 8 (losses of 35 to 250), each by an amount that depends on that rank's
text gain, which no other rank knows."""

import torch.nn.functional as F


def make_inputs(ctx, M, N):
    B, D = max(1, M // ctx.world), max(16, N)
    direction = ctx.randn((D,), "direction", same_on="world")

    def features(name):
        gain = ctx.rand((1,), f"{name}_gain", low=1.0, high=3.0)
        rows = gain * direction + ctx.randn((B, D), f"{name}_noise")
        return F.normalize(rows, dim=-1).contiguous()

    return (features("image"), features("text"), 10.0, -10.0, None)
