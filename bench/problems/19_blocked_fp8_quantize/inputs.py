"""Inputs for 19_blocked_fp8_quantize: per rank a standard-normal (M, N) tensor (different on every rank, trial
and seed) and the block size 128. N must be a multiple of 128."""


def make_inputs(ctx, M, N):
    if N % 128 != 0:
        raise ValueError(f"19_blocked_fp8_quantize: N={N} is not a multiple of the block size 128")
    return (ctx.randn((M, N), "x"), 128)
