"""Inputs for 28_moe_pre_all2all, as PKB's: per rank T = M standard-normal tokens of width H = N, each routed to
K = 2 distinct experts of NE = 8 chosen uniformly (a one-hot float32 mask (NE, K, T)), num_experts NE, and, as in
PKB, synthetic split sizes unrelated to the routing: each rank sends K*T/W permuted rows to every rank, and the
K*T received rows are cut into NE equal chunks (the first K*T mod NE one row longer), the same on every rank.
W must divide K*T (PKB's splits are inconsistent otherwise)."""

import torch


def routed_experts(ctx, tokens, experts, choices):
    """(tokens, choices) int64: each token's distinct experts, in a random order."""
    return torch.argsort(ctx.rand((tokens, experts), "routing", dtype=torch.float32), dim=1)[:, :choices]


def exchange_sizes(ctx, rows, experts):
    """Equal send and receive splits of `rows` permuted rows, and the (W, experts/W) per-local-expert chunks."""
    W = ctx.world
    if rows % W or experts % W:
        raise ValueError(f"{rows} routed rows and {experts} experts must split evenly over {W} ranks")
    splits = [rows // W] * W
    chunks = torch.full((experts,), rows // experts, dtype=torch.int64)
    chunks[:rows % experts] += 1
    return splits, list(splits), chunks.view(W, experts // W).to(ctx.device)


def make_inputs(ctx, M, N, NE, K):
    chosen = routed_experts(ctx, M, NE, K)
    mask = torch.zeros((NE, K, M), dtype=torch.float32, device=ctx.device)
    mask[chosen.T, torch.arange(K, device=ctx.device).view(K, 1), torch.arange(M, device=ctx.device)] = 1.0
    send, receive, chunks = exchange_sizes(ctx, K * M, NE)
    return (ctx.randn((M, N), "hidden_states"), mask, NE, send, receive, chunks, None)
