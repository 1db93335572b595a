"""Inputs for 37_ulysses_gather_heads_scatter_seq, sized as PKB's: per rank x (B, T, H, D) with B = M/64 and
T = N/64 (at least 1), standard normal and different on every rank, trial and seed; seq_dim 1, head_dim 2 and
group None."""


def make_inputs(ctx, M, N, H, D):
    B, T = max(1, M // 64), max(1, N // 64)
    return (ctx.randn((B, T, H, D), "x"), 1, 2, None)
