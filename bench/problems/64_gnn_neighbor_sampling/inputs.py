"""Inputs for 64_gnn_neighbor_sampling: a random graph of V nodes (PKB: V = max(10000, M) rounded up to a
multiple of W) from the stream every rank shares, each node owned by a rank drawn uniformly and having 1 .. 2D-1
in-neighbours drawn uniformly (mean D = 16, PKB's constant degree); rank r stores, in CSC form, the neighbours of
the nodes it owns (row pointers of all V nodes, empty for the others; edge ids are positions in its own list).
Each rank samples from S distinct seeds of its own (PKB: S = clamp(N / W, 512, 2048)), fanouts [10, 5], group
None.

PKB's graph holds no randomness (node v's neighbours are v + 1 .. v + 16, owner v mod W, seeds consecutive, the
same every trial) and every rank stores the whole graph, so a rank needed no other rank to answer; here owners,
degrees, neighbours and seeds change with the seed and trial, and a node's neighbours are stored only by its
owner. Every degree is at least 1 so that no rank's frontier empties before the others' (the reference, as
PKB's, would then leave the others waiting in a collective)."""

import torch


def make_inputs(ctx, V, S, D):
    W = ctx.world
    graph = ctx.generator("graph", same_on="world")
    owner = torch.randint(W, (V,), generator=graph)
    degree = torch.randint(1, 2 * D, (V,), generator=graph)
    neighbours = torch.randint(V, (int(degree.sum()),), generator=graph)
    mine = owner == ctx.rank
    ptr = torch.zeros(V + 1, dtype=torch.long)
    ptr[1:] = torch.cumsum(torch.where(mine, degree, 0), dim=0)
    col = neighbours[torch.repeat_interleave(mine, degree)]
    seeds = torch.randperm(V, generator=ctx.generator("seeds"))[:S]
    return (seeds.to(ctx.device), [10, 5], ptr.to(ctx.device), col.to(ctx.device), owner.to(ctx.device), None)
