"""Inputs for 55_ring_attention_tp, as PKB builds them: B = M / 64 sequences of T = N / 64 tokens, H heads of D
dimensions (hidden H * D), on a mesh of tp = min(2, W) by cp = W / tp ranks. A rank holds its CP slice of the
sequence, (B, T / cp, H * D), the same on every rank of its TP group; and its TP shard of the QKV weight
(3 * H / tp * D, H * D) and of the output weight (H * D, H / tp * D), standard normal times 0.02 and the same on
every rank of its CP group. Then num_heads H, softmax_scale None (1 / sqrt(D)), causal True and the two
groups."""


def make_inputs(ctx, M, N, H, D):
    tp, cp = ctx.mesh["tp"], ctx.mesh["cp"]
    B, T = max(1, M // 64), max(1, N // 64)
    if H % tp or T % cp:
        raise ValueError(f"55_ring_attention_tp: H={H} heads over tp={tp} or T={T} tokens over cp={cp} do not divide")
    heads = H // tp
    hidden_states = ctx.randn((B, T // cp, H * D), "hidden_states", same_on="tp")
    w_qkv = ctx.randn((3 * heads * D, H * D), "w_qkv", same_on="cp", std=0.02)
    w_o = ctx.randn((H * D, heads * D), "w_o", same_on="cp", std=0.02)
    return (hidden_states, w_qkv, w_o, H, None, True, ctx.groups["tp"], ctx.groups["cp"])
