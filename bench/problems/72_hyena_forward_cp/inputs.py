"""Inputs for 72_hyena_forward_cp: per rank its two zigzag chunks (L tokens) of all C channels of x1, x2 and v
(B, C, L), standard normal and the rank's own, as PKB; then h (C / G, F), conv_bias (C,), num_groups C / G,
group_dim G, group None and zigzag splitting on.

Where we differ: PKB's filter is arange(C / G * F) in bf16 divided by F, so channel c's filter is about c at
every tap (the bf16 rounding of c * F + j drops j) and its output grows with c, from ~1 to ~5000: no one
tolerance fits (allclose fails a float32-accurate candidate on the 11% of elements near a zero crossing of the
large channels; a relative norm would leave the small channels unchecked). Ours draws h normal with std 0.02 and
conv_bias standard normal, the same on every rank (from the shared seed), so every channel's output is ~1."""


def make_inputs(ctx, B, C, L, F, G):
    if C % (G * ctx.world) or L % 2:
        raise ValueError(f"72_hyena_forward_cp: C={C} channels in groups of G={G} over W={ctx.world} ranks, or "
                         f"L={L} tokens in two chunks, do not divide")
    shape = (B, C, L)
    return (ctx.randn(shape, "x1"), ctx.randn(shape, "x2"), ctx.randn(shape, "v"),
            ctx.randn((C // G, F), "h", same_on="world", std=0.02), ctx.randn((C,), "conv_bias", same_on="world"),
            C // G, G, None, True)
