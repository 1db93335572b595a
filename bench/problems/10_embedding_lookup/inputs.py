"""Inputs for 10_embedding_lookup, as PKB's: per rank a standard-normal shard of S = M rows of width D = N (rows
r*S .. r*S + S - 1 of the table), and S ids uniform over the whole table, [0, W*S)."""


def make_inputs(ctx, M, N):
    indices = ctx.randint((M,), "indices", 0, ctx.world * M)
    return (indices, ctx.randn((M, N), "shard"))
