"""Inputs for 85_distributed_sample_sort: rank r holds n = clamp(M / W, 4W, 4096) integers uniform in
[-256, 256), as bf16 (exact there), and group None. As in PKB, the odd ranks hold no values in every fourth
trial (trial % 4 == 3).

PKB draws integers in [-50, 50) and shifts rank r's by -r·n, so the ranks' ranges are disjoint and in reverse
order: sending each whole shard to rank W-1-r and sorting it there was the right answer. Ours overlap, so the
splitters decide where each value goes."""

import torch


def make_inputs(ctx, M):
    n = max(4 * ctx.world, min(M // ctx.world, 4096))
    if ctx.trial % 4 == 3 and ctx.rank % 2 == 1:
        n = 0
    return (ctx.randint((n,), "values", -256, 256, dtype=ctx.dtype), None)
