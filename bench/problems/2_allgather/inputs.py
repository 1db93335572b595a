"""Inputs for 2_allgather: one standard-normal (M, N) tensor per rank (different on every rank, trial and seed)."""


def make_inputs(ctx, M, N):
    return (ctx.randn((M, N), "tensor"),)
