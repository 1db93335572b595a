"""Inputs for 33_ulysses_all_to_all_tensor_primitive, as PKB's: per rank a standard-normal (M, N) tensor
(different on every rank, trial and seed), scatter_dim 0, gather_dim 1 and group None. W must divide M."""


def make_inputs(ctx, M, N):
    if M % ctx.world:
        raise ValueError(f"33_ulysses_all_to_all_tensor_primitive: M={M} rows do not split over {ctx.world} ranks")
    return (ctx.randn((M, N), "x"), 0, 1, None)
