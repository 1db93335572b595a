"""Inputs for 36_ulysses_gather_seq_scatter_heads, sized as PKB's: per rank x (B, T, H, D) with B = M/64 and
T = N/64 (at least 1), standard normal and different on every rank, trial and seed; seq_dim 1, head_dim 2,
group None and unpadded_dim_size 0. W must divide H."""


def make_inputs(ctx, M, N, H, D):
    if H % ctx.world:
        raise ValueError(f"36_ulysses_gather_seq_scatter_heads: H={H} heads do not split over {ctx.world} ranks")
    B, T = max(1, M // 64), max(1, N // 64)
    return (ctx.randn((B, T, H, D), "x"), 1, 2, None, 0)
