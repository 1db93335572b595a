"""Inputs for 65_gnn_feature_exchange_all2all, sized as PKB's: about P = clamp(M / W, 64, 1024) rows for every
peer, features of width clamp(N, 8, 128), a local table of 3/4 as many rows as the rank gathers, standard normal,
and seed_inverse_ids uniform over the table's rows.

PKB sends exactly P rows to every peer; ours sends a number drawn per (sender, receiver) pair within P +- P/4
(one table every rank shares), so a candidate that assumes equal chunks or rotates only one of the two lists
is caught. Rank s sends T[s][d] rows to rank d; in the rotated lists that is counts_received[k] = T[r][r + k]
of rank r, and its counts_sent[j] = T[r + j][r] (indices mod W)."""


def exchange_counts(ctx, M):
    """The (sender, receiver) row counts, the same on every rank, and this rank's rotated send and receive
    lists (gathered chunk k goes to rank + k; output chunk j comes from rank + j)."""
    W, r = ctx.world, ctx.rank
    per_peer = max(64, min(M // W, 1024))
    spread = per_peer // 4
    table = ctx.randint((W, W), "counts", per_peer - spread, per_peer + spread + 1, same_on="world").tolist()
    gathered = [table[r][(r + k) % W] for k in range(W)]
    received = [table[(r + j) % W][r] for j in range(W)]
    return gathered, received


def make_inputs(ctx, M, N):
    hidden = max(8, min(N, 128))
    gathered, received = exchange_counts(ctx, M)
    rows = max(1, sum(gathered) * 3 // 4)
    features = ctx.randn((rows, hidden), "features")
    ids = ctx.randint((sum(gathered),), "seed_inverse_ids", 0, rows)
    return (features, ids, received, gathered, None)
