"""Inputs for 67_gnn_sparse_embedding_all2all, sized as PKB's: per rank nnz = clamp(M / W, 1024, 50000) indices
uniform in [0, num_nodes) with num_nodes = max(100000, M) rounded up to a multiple of W, rows of width
clamp(N, 8, 128), standard normal, and group None."""


def make_inputs(ctx, M, N):
    W = ctx.world
    num_nodes = -(-max(100000, M) // W) * W
    nnz = max(1024, min(M // W, 50000))
    hidden = max(8, min(N, 128))
    idx = ctx.randint((nnz,), "idx", 0, num_nodes)
    return (idx, ctx.randn((nnz, hidden), "value"), num_nodes, None)
