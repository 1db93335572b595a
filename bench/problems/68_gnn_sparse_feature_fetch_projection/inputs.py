"""Inputs for 68_gnn_sparse_feature_fetch_projection: rank r holds its shard (S, D) of a table of
num_total_nodes = NODES rounded up to a multiple of W rows, S = num_total_nodes / W, standard normal; Q query
ids (int64) uniform over the whole table; its own projection (D, D), standard normal; num_total_nodes; group
None. All drawn on the device from this rank's stream (different on every rank, trial and seed).

PKB's table has 111 M rows (26.5 GiB per rank at W = 2) and its ids follow a fixed pattern (owner (i + r) mod W,
row (7 i + r) mod S); ours are drawn, and NODES is 16 M so that every input set the judge keeps alive fits on
one H200 with both process sets (bench/problems/README.md)."""

import torch


def make_inputs(ctx, NODES, Q, D):
    total = -(-NODES // ctx.world) * ctx.world
    shard = ctx.randn((total // ctx.world, D), "embedding_shard")
    ids = ctx.randint((Q,), "node_ids", 0, total)
    return (shard, ids, ctx.randn((D, D), "proj_matrix"), total, None)
