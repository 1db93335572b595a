"""Inputs for 7_reducescatter: one (W*M, N) tensor per rank of random integers in [-8, 8] (different on every
rank, trial and seed; bf16 sums of them are exact in any order)."""


def make_inputs(ctx, M, N):
    return (ctx.randint((ctx.world * M, N), "tensor", -8, 9, dtype=ctx.dtype),)
