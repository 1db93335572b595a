"""Inputs for 13_gemm_allreduce: per rank A (M, K) and B (K, N) with standard-normal values, different on every
rank, trial and seed."""


def make_inputs(ctx, M, N, K):
    return (ctx.randn((M, K), "A"), ctx.randn((K, N), "B"))
