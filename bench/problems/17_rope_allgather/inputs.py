"""Inputs for 17_rope_allgather, sized and drawn as PKB's: B = M/64 sequences of T = N/64 positions, S = T/W
(at least 1) of them per rank; per rank q and k (B, S, H, D) and cos and sin (B, S, D), all standard normal
(PKB draws cos and sin as random values too) and different on every rank, trial and seed. D must be even."""


def make_inputs(ctx, M, N, H, D):
    if D % 2:
        raise ValueError(f"17_rope_allgather: D={D} is odd; rotate_half needs two halves")
    B, S = max(1, M // 64), max(1, max(1, N // 64) // ctx.world)
    return (ctx.randn((B, S, H, D), "q"), ctx.randn((B, S, H, D), "k"), ctx.randn((B, S, D), "cos"),
            ctx.randn((B, S, D), "sin"))
