"""Inputs for 45_reducescatter_fused_rmsnorm, sized and drawn as PKB's: hidden size Hd = clamp(N, 32, 128) and
R = max(2, max(M, W) / max(W, 4)) rows per rank; per rank a standard-normal flat tensor of W*R*Hd elements
(different on every rank, trial and seed), a standard-normal gamma (Hd,), the same on every rank (PKB draws it
under rank 0's seed), and eps 1e-5."""


def make_inputs(ctx, M, N):
    hidden = max(32, min(N, 128))
    rows = max(2, max(M, ctx.world) // max(ctx.world, 4))
    return (ctx.randn((ctx.world * rows * hidden,), "rs_input"), ctx.randn((hidden,), "gamma", same_on="world"), 1e-5)
