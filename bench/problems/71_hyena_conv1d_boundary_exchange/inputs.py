"""Inputs for 71_hyena_conv1d_boundary_exchange, as PKB builds them: rank r holds x (B, C, 2L), its two zigzag
chunks of L tokens, and its own depthwise filter weight (C, 1, K), both standard normal and different on every
rank (PKB draws the filter per rank too); group None."""


def make_inputs(ctx, B, C, L, K):
    if K - 1 > L:
        raise ValueError(f"71_hyena_conv1d_boundary_exchange: a halo of K-1={K - 1} tokens exceeds a chunk of L={L}")
    return (ctx.randn((B, C, 2 * L), "x"), ctx.randn((C, 1, K), "weight"), None)
