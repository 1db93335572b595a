"""Inputs for 20_blocked_fp8_dequantize, drawn as PKB's: per rank y (W, M, N) and s (W, M*N/128), both
standard normal in the problem's dtype (PKB's "fp8" codes and scales are plain random values, negative
scales included), different on every rank, trial and seed; block size 128. M*N must be a multiple of 128."""


def make_inputs(ctx, M, N):
    if M * N % 128:
        raise ValueError(f"20_blocked_fp8_dequantize: M*N={M * N} is not a multiple of the block size 128")
    return (ctx.randn((ctx.world, M, N), "y"), ctx.randn((ctx.world, M * N // 128), "s"), 128)
