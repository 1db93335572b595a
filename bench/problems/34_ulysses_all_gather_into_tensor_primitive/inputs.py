"""Inputs for 34_ulysses_all_gather_into_tensor_primitive, as PKB's: per rank a standard-normal (M, N) tensor
(different on every rank, trial and seed) and group None."""


def make_inputs(ctx, M, N):
    return (ctx.randn((M, N), "x"), None)
