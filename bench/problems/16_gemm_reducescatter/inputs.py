"""Inputs for 16_gemm_reducescatter: per rank A (M, K/W) and B (K/W, N) with standard-normal values, different on
every rank, trial and seed (K is the inner dimension over all ranks, as in PKB). M and K must be divisible by the
world size."""


def make_inputs(ctx, M, N, K):
    for name, size in (("M", M), ("K", K)):
        if size % ctx.world != 0:
            raise ValueError(f"16_gemm_reducescatter: {name}={size} is not divisible by the world size {ctx.world}")
    k = K // ctx.world
    return (ctx.randn((M, k), "A"), ctx.randn((k, N), "B"))
