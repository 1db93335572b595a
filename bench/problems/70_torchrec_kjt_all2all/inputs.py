"""Inputs for 70_torchrec_kjt_all2all, as PKB's: key_splits[d] = 1 + d mod 3 features owned by rank d, a batch
of B = clamp(M / W, 512, 1024) samples per rank, lengths uniform in [5, 20] per (feature, sample) and ids uniform
in [0, 1000000), and pg None."""


def make_inputs(ctx, M):
    W = ctx.world
    key_splits = [1 + d % 3 for d in range(W)]
    batch = max(512, min(M // W, 1024))
    lengths = ctx.randint((sum(key_splits) * batch,), "lengths", 5, 21)
    values = ctx.randint((int(lengths.sum()),), "values", 0, 1000000)
    return (lengths, values, key_splits, batch, None)
