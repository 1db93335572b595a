"""Inputs for 5_scatter: rank 0 gets a standard-normal (W, M, N) tensor; every other rank gets a standard-normal
(M, N) placeholder whose values the reference ignores (different on every rank, trial and seed). src stays at
its default (0), so rank r must return slice r of rank 0's tensor."""


def make_inputs(ctx, M, N):
    shape = (ctx.world, M, N) if ctx.rank == 0 else (M, N)
    return (ctx.randn(shape, "tensor"),)
