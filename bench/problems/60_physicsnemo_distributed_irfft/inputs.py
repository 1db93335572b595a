"""Inputs for 60_physicsnemo_distributed_irfft, sized as PKB's (B = 2, C = 10, H = 720, X = 1440 by default):
the orthonormal 2-D real FFT (over the last two dimensions) of a standard-normal float32 field (B, C, H, X)
that every rank draws alike (PKB: under rank 0's seed), of which rank r holds the frequency rows r·H/W ..
(r+1)·H/W, complex64 (B, C, H/W, X/2 + 1). Then s = (H, X) and dim = (-2, -1); norm ("ortho") and group (None)
are solution()'s defaults."""

import torch


def make_inputs(ctx, B, C, H, X):
    W = ctx.world
    assert H % W == 0 and X % W == 0, f"H = {H} and X = {X} must be multiples of W = {W}"
    field = ctx.randn((B, C, H, X), "field", same_on="world", dtype=torch.float32)
    spectrum = torch.fft.rfft2(field, dim=(-2, -1), norm="ortho")
    rows = H // W
    return (spectrum[:, :, ctx.rank * rows:(ctx.rank + 1) * rows].contiguous(), [H, X], [-2, -1])
