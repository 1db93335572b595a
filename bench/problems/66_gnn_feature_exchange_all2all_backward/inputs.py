"""Inputs for 66_gnn_feature_exchange_all2all_backward, sized as PKB's: about P = clamp(M / W, 64, 1024) rows
for every peer, gradients of width clamp(N, 8, 128), float32 standard normal (PKB: float32 whatever the run's
dtype), a seed table of half as many rows as the rank receives, and seed_inverse_ids uniform over it.

As in 65, the chunk sizes are drawn per (sender, receiver) pair within P +- P/4 (PKB: exactly P): rank s sends
T[s][d] rows to rank d, so rank r's counts_sent[k] = T[r][r + k] and counts_received[j] = T[r + j][r]."""


def exchange_counts(ctx, M):
    """The (sender, receiver) row counts, the same on every rank, and this rank's rotated send and receive
    lists (sent chunk k goes to rank + k; received chunk j comes from rank + j)."""
    W, r = ctx.world, ctx.rank
    per_peer = max(64, min(M // W, 1024))
    spread = per_peer // 4
    table = ctx.randint((W, W), "counts", per_peer - spread, per_peer + spread + 1, same_on="world").tolist()
    sent = [table[r][(r + k) % W] for k in range(W)]
    received = [table[(r + j) % W][r] for j in range(W)]
    return sent, received


def make_inputs(ctx, M, N):
    hidden = max(8, min(N, 128))
    sent, received = exchange_counts(ctx, M)
    seed_size = max(1, sum(received) // 2)
    grad_output = ctx.randn((sum(sent), hidden), "grad_output")
    ids = ctx.randint((sum(received),), "seed_inverse_ids", 0, seed_size)
    return (grad_output, ids, seed_size, sent, received, None)
