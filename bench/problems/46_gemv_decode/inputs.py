"""Inputs for 46_gemv_decode, sized as PKB's: T = clamp(M/1024, 1, 8) tokens, hidden size Hd = clamp(N, 128,
4096) and a vocabulary of max(M, W*V) entries rounded up to a multiple of W (PKB: V = 1024). The hidden states
(T, Hd) are standard normal and the same on every rank; each rank's weight shard (vocabulary / W, Hd) and bias
shard are standard normal and its own (PKB slices one matrix drawn under rank 0's seed, which lets every rank
compute every shard)."""


def make_inputs(ctx, M, N, V):
    tokens, hidden = max(1, min(8, M // 1024)), max(128, min(N, 4096))
    vocab = -(-max(M, ctx.world * V) // ctx.world) * ctx.world
    local = vocab // ctx.world
    return (ctx.randn((tokens, hidden), "hidden_states", same_on="world"), ctx.randn((local, hidden), "weight"),
            ctx.randn((local,), "bias"))
