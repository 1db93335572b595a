"""Inputs for 38_ulysses_gather_seq_scatter_heads_qkv, sized as PKB's: per rank a packed QKV projection
(B, T, 3*H*D) with B = M/64 and T = N/64 (at least 1), standard normal and different on every rank, trial and
seed; seq_dim 1, group None, unpadded_dim_size None and restore_shape True. W must divide H*D."""


def make_inputs(ctx, M, N, H, D):
    if H * D % ctx.world:
        raise ValueError(f"38_ulysses_gather_seq_scatter_heads_qkv: H*D={H * D} does not split over {ctx.world} ranks")
    B, T = max(1, M // 64), max(1, N // 64)
    return (ctx.randn((B, T, 3 * H * D), "qkv"), 1, None, None, True)
