"""Inputs for 76_opensora_conv3d_allreduce, sized as PKB's: rank r holds x (B, C/W, T, H, X) and its weight
slice (C, C/W, 3, 3, 3), both standard normal and its own, the bias (C,) the same on every rank, stride 1,
padding 0, dilation 1, groups 1 and group None. PKB takes C = 512 (256 or 128 where W does not divide it).

The bias is normal with standard deviation 32 (PKB: linspace(-0.1, 0.1), a thousandth of the output's
scale, ~117 at the default shape), so that a candidate that drops it or adds it on every rank fails."""


def make_inputs(ctx, B, C, T, H, X):
    if C % ctx.world:
        raise ValueError(f"W = {ctx.world} must divide the channel count C = {C}")
    local = C // ctx.world
    return (ctx.randn((B, local, T, H, X), "x"), ctx.randn((C, local, 3, 3, 3), "weight"),
            ctx.randn((C,), "bias", same_on="world", std=32.0), 1, 0, 1, 1, None)
