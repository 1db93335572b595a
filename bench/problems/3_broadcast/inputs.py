"""Inputs for 3_broadcast: one standard-normal (M, N) tensor per rank (different on every rank, trial and seed).

src is left at its default (0), so every rank must return rank 0's tensor.
"""


def make_inputs(ctx, M, N):
    return (ctx.randn((M, N), "tensor"),)
