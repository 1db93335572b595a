"""Inputs for 87_conv2d_boundary_exchange, as PKB builds them: rank r holds x (B, C, h, WIDTH) with h = max(3,
HEIGHT / max(1, W / 2)) rows, its own weight (C, C, 3, 3) and bias (C,), all standard normal and different on
every rank (PKB draws the weights per rank too); stride 1, padding 1, group None.

PKB sizes the shards as if W/2 ranks held each of two images of HEIGHT rows, but the reference chains all W
ranks into one image of W * h rows; we copy both."""


def make_inputs(ctx, B, C, HEIGHT, WIDTH):
    rows = max(3, HEIGHT // max(1, ctx.world // 2))
    return (ctx.randn((B, C, rows, WIDTH), "x"), ctx.randn((C, C, 3, 3), "weight"), ctx.randn((C,), "bias"),
            1, 1, None)
