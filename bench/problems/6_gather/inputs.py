"""Inputs for 6_gather: one standard-normal (M, N) tensor per rank (different on every rank, trial and seed).

dst stays at its default (0)."""


def make_inputs(ctx, M, N):
    return (ctx.randn((M, N), "tensor"),)
