"""Inputs for 39_ulysses_attention_e2e: B = M / 64 sequences of T = N / 64 tokens split into W consecutive blocks,
H heads of D dimensions (hidden H * D); rank r holds hidden_states (B, T / W, H * D) standard normal and its own
w_qkv (3 * H * D, H * D) and w_o (H * D, H * D), as PKB draws them per rank; then group None, num_heads H and
causal False, as PKB. W must divide both T and H (the all-to-alls split the heads and the sequence evenly): at the
default shape T = 16 and H = 8, at the small one T = 8 and H = 8, so W = 1, 2, 4 and 8 all hold.

Where we differ: PKB draws the weights standard normal, unscaled, so the scores reach ~500 after the 1/sqrt(D)
scale and the softmax is an argmax whose winner flips with the bf16 rounding of the scores (a candidate keeping
float32 intermediates fails 16% of the elements). Ours have std 0.044, about 1/sqrt(H * D) at H * D = 512 (both
shapes), as a model initialises them: q and k entries of unit scale, scores with a standard deviation of ~1, so
the softmax weights matter without collapsing to an argmax, and outputs of ~0.3, well above atol. (0.02, PKB's
55 and 56's scale, gives scores of ~0.2 there: evenly averaged values then passed at the former small shape.)"""


def make_inputs(ctx, M, N, H, D):
    B, T = max(1, M // 64), max(1, N // 64)
    if T % ctx.world or H % ctx.world:
        raise ValueError(f"39_ulysses_attention_e2e: T={T} tokens or H={H} heads do not split over W={ctx.world}")
    hidden = H * D
    return (ctx.randn((B, T // ctx.world, hidden), "hidden_states"),
            ctx.randn((3 * hidden, hidden), "w_qkv", std=0.044), ctx.randn((hidden, hidden), "w_o", std=0.044),
            None, H, False)
