"""Inputs for 1_allreduce: one (M, N) tensor per rank of random integers in [-8, 8] (different on every rank,
trial and seed). Small integers keep every bf16 sum exact whatever the order of the additions, so the tolerance
judges the data flow, not the summation order."""


def make_inputs(ctx, M, N):
    return (ctx.randint((M, N), "tensor", -8, 9, dtype=ctx.dtype),)
