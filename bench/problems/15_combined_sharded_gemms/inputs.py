"""Inputs for 15_combined_sharded_gemms, sized and drawn as PKB's: with M and H rounded up to multiples of W,
per rank x (M, H/W), W1 (H, F) and W2 (F, H), all standard normal and different on every rank, trial and seed
(PKB's weights are per rank too)."""


def _round_up(n, m):
    return -(-n // m) * m


def make_inputs(ctx, M, H, F):
    rows, hidden = _round_up(M, ctx.world), _round_up(H, ctx.world)
    return (ctx.randn((rows, hidden // ctx.world), "x"), ctx.randn((hidden, F), "W1"), ctx.randn((F, hidden), "W2"))
