"""Inputs for 1_allreduce: one (M, N) tensor per rank of random integers in [-64, 64] (different on every rank,
trial and seed). Integers keep the bf16 sums of up to four ranks exact whatever the order of the additions, so
the tolerance judges the data flow, not the summation order; and they need bf16's precision: a transport in
fp8 (e4m3 holds integers exactly only up to 16) changes them."""


def make_inputs(ctx, M, N):
    return (ctx.randint((M, N), "tensor", -64, 65, dtype=ctx.dtype),)
