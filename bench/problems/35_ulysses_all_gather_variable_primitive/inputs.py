"""Inputs for 35_ulysses_all_gather_variable_primitive, as PKB's: per rank a standard-normal (M, N) tensor
(different on every rank, trial and seed; the same shape on every rank), gather_dim 0 and group None."""


def make_inputs(ctx, M, N):
    return (ctx.randn((M, N), "x"), 0, None)
