"""Inputs for 12_allgather_gemm, as PKB draws them: per rank A (M, K/W) and B (K, N), standard normal and
different on every rank, trial and seed (each rank multiplies by its own B). W must divide K."""


def make_inputs(ctx, M, N, K):
    if K % ctx.world:
        raise ValueError(f"12_allgather_gemm: K={K} is not a multiple of the world size {ctx.world}")
    return (ctx.randn((M, K // ctx.world), "A"), ctx.randn((K, N), "B"))
