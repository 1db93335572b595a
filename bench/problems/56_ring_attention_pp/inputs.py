"""Inputs for 56_ring_attention_pp, as PKB builds them: B = M / 64 sequences of T = N / 64 tokens, H heads of D
dimensions (hidden H * D), on a mesh of pp = min(2, W) stages by cp = W / pp ranks. A rank holds its CP slice of
the sequence, (B, T / cp, H * D), the same on every stage (only stage 0 uses it); and its stage's weights w_qkv
(3 * H * D, H * D) and w_o (H * D, H * D), standard normal times 0.02 and the same on every rank of the stage.
Then num_heads H, softmax_scale None (1 / sqrt(D)), causal True and the two groups."""


def make_inputs(ctx, M, N, H, D):
    cp = ctx.mesh["cp"]
    B, T = max(1, M // 64), max(1, N // 64)
    if T % cp:
        raise ValueError(f"56_ring_attention_pp: T={T} tokens do not split over cp={cp} ranks")
    hidden_states = ctx.randn((B, T // cp, H * D), "hidden_states", same_on="pp")
    w_qkv = ctx.randn((3 * H * D, H * D), "w_qkv", same_on="cp", std=0.02)
    w_o = ctx.randn((H * D, H * D), "w_o", same_on="cp", std=0.02)
    return (hidden_states, w_qkv, w_o, H, None, True, ctx.groups["cp"], ctx.groups["pp"])
