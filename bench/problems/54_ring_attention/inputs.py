"""Inputs for 54_ring_attention, as PKB builds them: B = M / 64 sequences of T = N / 64 tokens split into W
consecutive blocks; rank r holds q, k and v (B, T / W, H, D), standard normal (its own values), then
softmax_scale None (1 / sqrt(D)), causal True and group None (the default group)."""


def make_inputs(ctx, M, N, H, D):
    B, T = max(1, M // 64), max(1, N // 64)
    if T % ctx.world:
        raise ValueError(f"54_ring_attention: T={T} tokens do not split over W={ctx.world} ranks")
    shape = (B, T // ctx.world, H, D)
    return (ctx.randn(shape, "q"), ctx.randn(shape, "k"), ctx.randn(shape, "v"), None, True, None)
