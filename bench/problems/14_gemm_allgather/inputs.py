"""Inputs for 14_gemm_allgather, as PKB draws them: per rank A (M, K) and B (K, N/W), standard normal and
different on every rank, trial and seed. W must divide N."""


def make_inputs(ctx, M, N, K):
    if N % ctx.world:
        raise ValueError(f"14_gemm_allgather: N={N} is not a multiple of the world size {ctx.world}")
    return (ctx.randn((M, K), "A"), ctx.randn((K, N // ctx.world), "B"))
