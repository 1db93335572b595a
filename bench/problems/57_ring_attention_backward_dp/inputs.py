"""Inputs for 57_ring_attention_backward_dp, as PKB builds them: B = M / 64 sequences of T = N / 64 tokens, H
heads of D dimensions, on a mesh of dp = min(2, W) replicas by cp = W / dp ranks. A rank holds its own standard
normal dout, q, k, v (B, T / cp, H, D) and the forward pass's out (B, T / cp, H, D) and softmax_lse (B, H,
T / cp) float32, computed as PKB does from the rank's own q, k and v alone (non-causal, scale 1 / sqrt(D)): at
cp > 1 these are not the ring's values, so the probabilities of other ranks' key blocks are not normalised.
Then softmax_scale None, causal False and the two groups."""

import torch


def make_inputs(ctx, M, N, H, D):
    cp = ctx.mesh["cp"]
    B, T = max(1, M // 64), max(1, N // 64)
    if T % cp:
        raise ValueError(f"57_ring_attention_backward_dp: T={T} tokens do not split over cp={cp} ranks")
    shape = (B, T // cp, H, D)
    q, k, v, dout = (ctx.randn(shape, name) for name in ("q", "k", "v", "dout"))
    qh, kh, vh = (t.transpose(1, 2).float() for t in (q, k, v))
    scores = (qh @ kh.transpose(-1, -2)) * D ** -0.5
    softmax_lse = torch.logsumexp(scores, dim=-1)
    out = (torch.softmax(scores, dim=-1) @ vh).transpose(1, 2).to(ctx.dtype).contiguous()
    return (dout, q, k, v, out, softmax_lse, None, False, ctx.groups["cp"], ctx.groups["dp"])
