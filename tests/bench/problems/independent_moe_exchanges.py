"""The independent computations of the mixture-of-experts problems and the token and feature exchanges:
10 (embedding lookup by owner), 26-32 and 49-51 (token counts per expert, the uneven all-to-all, dispatch and
combine with their regrouping, the LoRA gradient sum, and the whole MoE forward: top-K routing computed as
the reference routes, each routed token through its expert's SwiGLU MLP), 65-68 (GNN feature exchanges, the
sparse embedding route and the sharded feature fetch) and 70 (TorchRec's keyed jagged tensor all-to-all).
Each exchange is written as who receives which rows from whom, without any collective.
"""

import torch

from float64 import f64, total


def embedding_lookup(args, W):
    table = torch.cat([f64(a[1]) for a in args])
    rows = args[0][1].shape[0]
    # Each rank's ids grouped by owner (rank 0's first), in their order within an owner.
    return [table[sorted(a[0].tolist(), key=lambda i: i // rows)] for a in args]


def token_preprocess(args, W):
    E = args[0][1]
    local = E // W
    counts = torch.stack([a[0].to(torch.float64).sum(dim=(1, 2)) for a in args])  # (rank, expert)
    outs = []
    for r in range(W):
        mine = counts[:, r * local:(r + 1) * local]
        outs.append((counts[r].view(W, local).sum(dim=1), mine.sum(dim=1), mine, mine.sum(dim=0)))
    return outs


def all_to_all(args, W):
    outs = []
    for r in range(W):
        pieces = []
        for s in range(W):
            sends = args[s][1]
            assert args[r][2][s] == sends[r], "output split sizes must mirror the senders' input split sizes"
            start = sum(sends[:r])
            pieces.append(f64(args[s][0][start:start + sends[r]]))
        outs.append(torch.cat(pieces))
    return outs


def moe_dispatch(args, W):
    """28: each rank's routed (expert, token) rows in expert-major order, cut by input_splits and sent; the
    received rows regrouped by local expert."""
    permuted, maps, mappings = [], [], []
    for hidden, mask, *_ in args:
        routing_map = mask.to(torch.float64).sum(dim=1)
        pairs = [(e, t) for e in range(routing_map.shape[0]) for t in range(routing_map.shape[1]) if routing_map[e, t]]
        mappings.append(torch.tensor([t for _, t in pairs], dtype=torch.int64))
        permuted.append(f64(hidden)[mappings[-1]])
        maps.append(routing_map)
    outs = []
    for r in range(W):
        local = args[r][2] // W
        received = []
        for s in range(W):
            start = sum(args[s][3][:r])
            received.append(permuted[s][start:start + args[s][3][r]])
        chunks = list(torch.split(torch.cat(received), args[r][5].reshape(-1).tolist()))
        regrouped = torch.cat([chunks[s * local + e] for e in range(local) for s in range(W)])
        outs.append((regrouped, maps[r], mappings[r], torch.Size(args[r][0].shape)))
    return outs


def moe_combine(args, W):
    """29: undo the regrouping, send each rank its rows back, weight and sum them into the tokens."""
    by_sender = []
    for a in args:
        local = a[3] // W
        chunks = list(torch.split(f64(a[0]), a[6].T.reshape(-1).tolist()))
        by_sender.append(torch.cat([chunks[e * W + s] for s in range(W) for e in range(local)]))
    outs = []
    for r in range(W):
        weights, selected, routing_map, mapping, shape = args[r][1], args[r][2], args[r][7], args[r][8], args[r][9]
        back = []
        for s in range(W):
            start = sum(args[s][5][:r])
            back.append(by_sender[s][start:start + args[s][5][r]])
        back = torch.cat(back)
        pairs = [(e, t) for e in range(routing_map.shape[0]) for t in range(routing_map.shape[1]) if routing_map[e, t]]
        out = torch.zeros(shape, dtype=torch.float64)
        for i, (row, (e, t)) in enumerate(zip(back, pairs)):
            assert int(mapping[i]) == t
            k = selected[t].tolist().index(e)
            # The weighted row is rounded to the problem's dtype before the sum (the reference's maths).
            out[t] += f64((f64(weights[t, k]) * row).to(weights.dtype))
        outs.append(out)
    return outs


def lora_grads_sum(args, W):
    return [tuple(total([a[i] for a in args]) for i in range(3))] * W


def moe_forward(args, W, group_size, lora=False):
    """31, 32, 49-51: every rank's tokens through the top-K router (computed as the reference computes it, in
    the inputs' dtype, so that near-ties fall the same way), each routed pair through the SwiGLU MLP of the rank
    hosting its expert in the rank's EP group (consecutive ranks of group_size), weighted and summed, in
    float64. With lora, each projection adds its LoRA delta h @ A.T @ B.T (the factors after the biases)."""
    import torch.nn.functional as F

    def mlp(x, p):
        def proj(i, h):
            y = h @ f64(p[3 + 2 * i]).T + f64(p[4 + 2 * i])
            return y + h @ f64(p[9 + 2 * i]).T @ f64(p[10 + 2 * i]).T if lora else y
        hidden = F.silu(proj(0, x)) * proj(1, x)  # gate, up
        return proj(2, hidden)  # down

    outs = []
    for r in range(W):
        x, gate_weight, gate_bias, E, K = args[r][0], args[r][1], args[r][2], args[r][-3], args[r][-2]
        probs = torch.softmax(F.linear(x, gate_weight, gate_bias), dim=-1)
        weights, experts = torch.topk(probs, K, dim=-1)
        base, per_rank = r // group_size * group_size, E // group_size
        through = {o: mlp(f64(x), args[o]) for o in range(base, base + group_size)}
        out = torch.zeros(x.shape, dtype=torch.float64)
        for k in range(K):
            owners = base + experts[:, k] // per_rank
            for o, y in through.items():
                chosen = owners == o
                out[chosen] += f64(weights[chosen, k]).unsqueeze(1) * y[chosen]
        outs.append(out)
    return outs


def _rotated_chunks(args, W, rows_of, send_at, receive_at):
    """65/66's exchange: chunk k of rank s's rows (cut by its list at send_at) lands in chunk (W - k) mod W of
    rank (s + k) mod W (cut by that rank's list at receive_at). Returns every rank's received rows."""
    chunks = [list(torch.split(rows_of(s), args[s][send_at])) for s in range(W)]
    outs = []
    for r in range(W):
        pieces = []
        for j in range(W):
            piece = chunks[(r + j) % W][(W - j) % W]
            assert piece.shape[0] == args[r][receive_at][j], "chunk sizes of sender and receiver disagree"
            pieces.append(piece)
        outs.append(torch.cat(pieces))
    return outs


def feature_exchange(args, W):
    return _rotated_chunks(args, W, lambda s: f64(args[s][0][args[s][1]]), 3, 2)


def feature_exchange_backward(args, W):
    received = _rotated_chunks(args, W, lambda s: f64(args[s][0]), 3, 4)
    outs = []
    for r in range(W):
        table = torch.zeros((args[r][2], received[r].shape[1]), dtype=torch.float64)
        for row, seed in zip(received[r], args[r][1].tolist()):
            table[seed] += row
        outs.append(table)
    return outs


def sparse_embedding_route(args, W):
    outs = []
    for r in range(W):
        idx, rows = [], []
        for s in range(W):
            for i, v in zip(args[s][0].tolist(), args[s][1]):
                if i % W == r:
                    idx.append(i)
                    rows.append(f64(v))
        outs.append((torch.tensor(idx, dtype=torch.int64),
                     torch.stack(rows) if rows else torch.zeros((0, args[0][1].shape[1]), dtype=torch.float64)))
    return outs


def feature_fetch(args, W):
    """68: each rank's ids looked up in the whole table (the shards stacked), times its own projection."""
    table = torch.cat([f64(a[0]) for a in args])
    return [table[ids] @ f64(proj) for _, ids, proj, _, _ in args]


def kjt_all_to_all(args, W):
    """Rank r gets, for each feature it owns, every rank's batch of it in rank order (lengths and ids)."""
    key_splits, batch = args[0][2], args[0][3]
    first = [sum(key_splits[:d]) for d in range(W)]
    per_rank = []
    for lengths, values, *_ in args:
        rows = lengths.view(-1, batch)
        ends = torch.cumsum(rows.sum(dim=1), 0).tolist()
        per_rank.append([(rows[f], values[(ends[f - 1] if f else 0):ends[f]]) for f in range(rows.shape[0])])
    outs = []
    for r in range(W):
        owned = range(first[r], first[r] + key_splits[r])
        segments = [per_rank[s][f] for f in owned for s in range(W)]
        outs.append({"lengths": torch.cat([seg[0] for seg in segments]),
                     "values": torch.cat([seg[1] for seg in segments]),
                     "stride": torch.tensor(W * batch), "stride_per_rank": torch.tensor([batch] * W)})
    return outs
