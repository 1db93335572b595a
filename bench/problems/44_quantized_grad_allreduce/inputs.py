"""Inputs for 44_quantized_grad_allreduce, sized and drawn as PKB's: per rank a standard-normal flat gradient of
max(M*N, 64*W) elements (different on every rank, trial and seed) and the block size clamp(N/4, 16, 128)."""


def make_inputs(ctx, M, N):
    return (ctx.randn((max(M * N, 64 * ctx.world),), "grad"), min(128, max(16, N // 4)))
