"""Inputs for 27_moe_all2all_primitive: per rank a standard-normal (M, N) tensor (different on every rank, trial
and seed), the split sizes, and group None (the default group).

As in PKB, rank r sends M // W rows to every rank and the remainder M % W to the last one as well. Rank r
therefore receives M // W rows from every rank, plus the remainder when r is the last rank; PKB passes its own
input splits as the output splits, which is only right when W divides M.
"""


def make_inputs(ctx, M, N):
    W = ctx.world
    chunk, rest = divmod(M, W)
    send = [chunk] * W
    send[-1] += rest
    receive = [chunk + (rest if ctx.rank == W - 1 else 0)] * W
    return (ctx.randn((M, N), "tokens"), send, receive, None)
