"""Inputs for 8_alltoall: one standard-normal (W, M, N) tensor per rank (different on every rank, trial and seed);
slice d is meant for rank d."""


def make_inputs(ctx, M, N):
    return (ctx.randn((ctx.world, M, N), "tensor"),)
