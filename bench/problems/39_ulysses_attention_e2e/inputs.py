"""Inputs for 39_ulysses_attention_e2e: B = M / 64 sequences of T = N / 64 tokens split into W consecutive blocks,
H heads of D dimensions (hidden H * D); rank r holds hidden_states (B, T / W, H * D) standard normal and its own
w_qkv (3 * H * D, H * D) and w_o (H * D, H * D); then group None, num_heads H and causal False, as PKB.

Where we differ: PKB draws the weights standard normal, unscaled, so the scores reach ~500 after the 1/sqrt(D)
scale and the softmax is an argmax whose winner flips with the bf16 rounding of the scores (a candidate keeping
float32 intermediates fails 16% of the elements). Ours scales them by 0.02, as PKB's 55 and 56 do."""


def make_inputs(ctx, M, N, H, D):
    B, T = max(1, M // 64), max(1, N // 64)
    if T % ctx.world or H % ctx.world:
        raise ValueError(f"39_ulysses_attention_e2e: T={T} tokens or H={H} heads do not split over W={ctx.world}")
    hidden = H * D
    return (ctx.randn((B, T // ctx.world, hidden), "hidden_states"),
            ctx.randn((3 * hidden, hidden), "w_qkv", std=0.02), ctx.randn((hidden, hidden), "w_o", std=0.02),
            None, H, False)
