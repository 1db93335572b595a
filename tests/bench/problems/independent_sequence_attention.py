"""The independent computations of the sequence- and context-parallel problems: Ulysses (33-39: the
all-to-all layouts and the end-to-end attention layer), ring and context-parallel attention (54-57: with
TP, with pipeline stages, and the backward with DP), MAGI-1's range attention (77), the zigzag-sharded
Hyena convolutions (71, 72) and the gated delta rule of Kimi and Gated DeltaNet (74, 75). Each runs over the
whole sequence joined from every rank's shard, then cuts out each rank's part; shared here are softmax
attention, the zigzag join and split, and the delta-rule recurrence.
"""

import torch

from float64 import f64


def ulysses(name, args, W):
    """33-38: every rank's piece r along the scattered dimension, concatenated in rank order along the
    gathered one, for each rank r."""
    xs = [f64(a[0]) for a in args]
    if name in ("34_ulysses_all_gather_into_tensor_primitive", "35_ulysses_all_gather_variable_primitive"):
        return [torch.cat(xs, dim=0)] * W
    if name == "38_ulysses_gather_seq_scatter_heads_qkv":
        B, T, P = xs[0].shape
        xs = [x.view(B, T, 3, P // 3) for x in xs]
        return [torch.cat([x.chunk(W, dim=3)[r] for x in xs], dim=1).reshape(B, W * T, P // W) for r in range(W)]
    scatter, gather = {"33_ulysses_all_to_all_tensor_primitive": (0, 1), "36_ulysses_gather_seq_scatter_heads": (2, 1),
                       "37_ulysses_gather_heads_scatter_seq": (1, 2)}[name]
    if xs[0].shape[scatter] % W:  # 37 pads the sequence with zeros first
        pad = list(xs[0].shape)
        pad[scatter] = -pad[scatter] % W
        xs = [torch.cat([x, x.new_zeros(pad)], dim=scatter) for x in xs]
    return [torch.cat([x.chunk(W, dim=scatter)[r] for x in xs], dim=gather) for r in range(W)]


def ulysses_attention(args, W):
    """39: every rank's tokens projected to q, k, v with that rank's own weights, joined into the whole sequence;
    softmax attention of every head over the whole sequence; each rank's block projected with its own w_o."""
    q, k, v = [], [], []
    for x, w_qkv, _, _, heads, _ in args:
        x, w_qkv = f64(x), f64(w_qkv)
        B, S, _ = x.shape
        for part, t in zip((q, k, v), (x @ w_qkv.T).view(B, S, 3, heads, -1).unbind(dim=2)):
            part.append(t)
    causal = args[0][5]
    out = attention(torch.cat(q, dim=1), torch.cat(k, dim=1), torch.cat(v, dim=1), causal)  # (B, T, H, D)
    return [block.reshape(block.shape[0], block.shape[1], -1) @ f64(a[2]).T
            for block, a in zip(out.chunk(W, dim=1), args)]


def ulysses_head_mixing_alone(args, W):
    """Every rank's answer to 39 as PKB computes it, which needs no communication: its own tokens, projected
    with its own weights; within each token, softmax attention among the heads of each of the W head groups,
    then the output projection. 39 must tell this apart from its answer (test_problems.py)."""
    outs = []
    for x, w_qkv, w_o, _, heads, causal in args:
        x, w_qkv, w_o = f64(x), f64(w_qkv), f64(w_o)
        B, S, _ = x.shape
        h = heads // W
        qkv = (x @ w_qkv.T).view(B, S, 3, W, h, -1)  # (B, S, q/k/v, head group, head in group, D)
        q, k, v = qkv.unbind(dim=2)
        scores = torch.einsum("bsgid,bsgjd->bsgij", q, k) * q.shape[-1] ** -0.5
        if causal:
            scores = scores.masked_fill(torch.ones(h, h, dtype=torch.bool).triu(1), float("-inf"))
        mixed = torch.einsum("bsgij,bsgjd->bsgid", torch.softmax(scores, dim=-1), v)
        outs.append(mixed.reshape(B, S, -1) @ w_o.T)
    return outs


def local_attention_alone(args, W):
    """Every rank's answer to 39 if it took its own block for the whole sequence (no communication)."""
    outs = []
    for x, w_qkv, w_o, _, heads, causal in args:
        x, w_qkv, w_o = f64(x), f64(w_qkv), f64(w_o)
        B, S, _ = x.shape
        q, k, v = (x @ w_qkv.T).view(B, S, 3, heads, -1).unbind(dim=2)
        outs.append(attention(q, k, v, causal).reshape(B, S, -1) @ w_o.T)
    return outs


def attention(q, k, v, causal, scale=None):
    """Softmax attention of (B, T, H, D) float64 tensors over the whole sequence; scale None: 1 / sqrt(D)."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        scores = scores.masked_fill(torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)


def cp_attention(args, W):
    """54: every rank's block of one causal attention over the concatenated sequence."""
    q, k, v = (torch.cat([f64(a[i]) for a in args], dim=1) for i in range(3))
    return list(attention(q, k, v, args[0][4], args[0][3]).chunk(W, dim=1))


def ring_attention(args, W, mesh):
    """The full layer on the whole sequence, then each rank's rows: the TP sum is over all heads' shards."""
    tp, cp = mesh["tp"], mesh["cp"]
    rank_of = lambda c, t: c * tp + t  # noqa: E731 - row-major over (cp, tp)
    x = torch.cat([f64(args[rank_of(c, 0)][0]) for c in range(cp)], dim=1)  # (B, T, hidden)
    B, T, _ = x.shape
    heads, causal = args[0][3], args[0][5]
    out = 0
    for t in range(tp):
        w_qkv, w_o = f64(args[rank_of(0, t)][1]), f64(args[rank_of(0, t)][2])
        h = heads // tp
        D = w_qkv.shape[0] // 3 // h
        q, k, v = (x @ w_qkv.T).view(B, T, 3, h, D).unbind(dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * D ** -0.5
        if causal:
            scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        context = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v).reshape(B, T, h * D)
        out = out + context @ w_o.T
    S = T // cp
    return [out[:, (r // tp) * S:(r // tp + 1) * S] for r in range(W)]


def pipeline_attention(args, W, mesh):
    """56: stage after stage of attention layers over the whole sequence; rank (stage p, cp c) holds stage p's
    output, rows of CP block c."""
    pp, cp = mesh["pp"], mesh["cp"]
    rank_of = lambda p, c: p * cp + c  # noqa: E731 - row-major over (pp, cp)
    x = torch.cat([f64(args[rank_of(0, c)][0]) for c in range(cp)], dim=1)
    B, T, hidden = x.shape
    heads, causal = args[0][3], args[0][5]
    stage_out = []
    for p in range(pp):
        w_qkv, w_o = f64(args[rank_of(p, 0)][1]), f64(args[rank_of(p, 0)][2])
        q, k, v = (x @ w_qkv.T).view(B, T, 3, heads, -1).unbind(dim=2)
        x = attention(q, k, v, causal).reshape(B, T, -1) @ w_o.T
        stage_out.append(x)
    return [stage_out[r // cp].chunk(cp, dim=1)[r % cp] for r in range(W)]


def ring_attention_backward(args, W, mesh):
    """57: in each DP replica, the attention gradients of every (query block, key block) pair with the query
    rank's own out and lse, summed per block; then each CP index's mean over the replicas."""
    dp, cp = mesh["dp"], mesh["cp"]
    causal = args[0][7]
    grads = []
    for d in range(dp):
        blocks = [[f64(t) for t in args[d * cp + c][:6]] for c in range(cp)]
        scale = blocks[0][1].shape[-1] ** -0.5
        dq = [torch.zeros_like(b[1]) for b in blocks]
        dk = [torch.zeros_like(b[2]) for b in blocks]
        dv = [torch.zeros_like(b[3]) for b in blocks]
        for i, (dout, q, _, _, out, lse) in enumerate(blocks):
            for j, (_, _, k, v, _, _) in enumerate(blocks):
                if causal and j > i:
                    continue
                s = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
                if causal and i == j:
                    s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
                p = torch.exp(s - lse.unsqueeze(-1))
                row = (dout * out).sum(dim=-1).transpose(1, 2).unsqueeze(-1)  # (B, H, S, 1)
                ds = p * (torch.einsum("bqhd,bkhd->bhqk", dout, v) - row)
                dq[i] += torch.einsum("bhqk,bkhd->bqhd", ds, k) * scale
                dk[j] += torch.einsum("bhqk,bqhd->bkhd", ds, q) * scale
                dv[j] += torch.einsum("bhqk,bqhd->bkhd", p, dout)
        grads.append(list(zip(dq, dk, dv)))
    return [tuple(sum(grads[d][r % cp][i] for d in range(dp)) / dp for i in range(3)) for r in range(W)]


def range_attention(args, W):
    """77: every range's keys gathered from all ranks (clipped), and each rank's queries of that range, every
    head, attending to them (grouped-query heads, no mask)."""
    _, _, k_ranges, R, clip, _ = args[0]
    D = args[0][0].shape[-1]
    per = args[0][0].shape[0] // R
    kv = torch.stack([f64(a[1]).reshape(R, per, *a[1].shape[1:]) for a in args], dim=1)  # (R, W, P, Hkv, 2D)
    kv = kv.reshape(R, W * per, *kv.shape[3:])[:, :clip].reshape(R * clip, *kv.shape[3:])
    outs = []
    for query, *_ in args:
        q = f64(query).reshape(R, per, *query.shape[1:])
        ranges = []
        for i in range(R):
            keys = kv[int(k_ranges[i, 0]):int(k_ranges[i, 1])]
            group = q.shape[2] // keys.shape[1]  # query heads per KV head
            k = keys[..., :D].repeat_interleave(group, dim=1)
            v = keys[..., D:].repeat_interleave(group, dim=1)
            scores = torch.einsum("qhd,khd->hqk", q[i], k) * D ** -0.5
            ranges.append(torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), v))
        outs.append(torch.cat(ranges))
    return outs


def zigzag_join(parts, W, dim):
    """The whole sequence from W zigzag shards: rank r holds chunks r and 2W-1-r, in that order, along dim."""
    chunks = [None] * (2 * W)
    for r, part in enumerate(parts):
        chunks[r], chunks[2 * W - 1 - r] = part.chunk(2, dim=dim)
    return torch.cat(chunks, dim=dim)


def zigzag_split(full, W, dim):
    chunks = full.chunk(2 * W, dim=dim)
    return [torch.cat([chunks[r], chunks[2 * W - 1 - r]], dim=dim) for r in range(W)]


def halo_conv1d(args, W):
    """71: each rank's filter run causally over the whole sequence, then that rank's two chunks."""
    x = zigzag_join([f64(a[0]) for a in args], W, dim=2)
    outs = []
    for r in range(W):
        weight = f64(args[r][1])  # (C, 1, K)
        K = weight.shape[-1]
        padded = torch.nn.functional.pad(x, (K - 1, 0))
        windows = padded.unfold(2, K, 1)  # (B, C, T, K): the K inputs of every output
        y = (windows * weight[:, 0].view(1, -1, 1, K)).sum(dim=-1)
        outs.append(zigzag_split(y, W, dim=2)[r])
    return outs


def hyena_long_conv(args, W):
    """72: the whole sequence of every channel, its causal filter applied as a float64 linear convolution
    (zero-padded FFT), and each rank's zigzag tokens of all channels, transposed to (B, L, C)."""
    x1, x2, v = (zigzag_join([f64(a[i]) for a in args], W, dim=2) for i in range(3))
    h, bias, group_dim = f64(args[0][3]), f64(args[0][4]), args[0][6]
    u = x2 * v
    T = u.shape[-1]
    taps = h.repeat_interleave(group_dim, dim=0)[:, :T]  # beyond T a causal filter reaches nothing
    n = T + taps.shape[1]
    y = torch.fft.irfft(torch.fft.rfft(u, n=n) * torch.fft.rfft(taps, n=n), n=n)[..., :T] + bias.view(1, -1, 1) * u
    return [part.transpose(1, 2) for part in zigzag_split(x1 * y, W, dim=2)]


def delta_rule(q, k, v, decay, beta):
    """The gated delta rule in float64, state (K, V) per batch and head from zero: S <- diag(decay_t) S, then
    S <- S + k_t beta_t (v_t - k_t S), output q_t S. q, k (B, T, H, K), v (B, T, H, V), decay (B, T, H, K) per
    key row, beta (B, T, H); returns (B, T, H, V)."""
    B, T, H, K = q.shape
    state = torch.zeros(B, H, K, v.shape[-1], dtype=torch.float64)
    out = []
    for t in range(T):
        state = decay[:, t].unsqueeze(-1) * state
        error = v[:, t] - torch.einsum("bhk,bhkv->bhv", k[:, t], state)
        state = state + torch.einsum("bhk,bhv->bhkv", k[:, t], beta[:, t].unsqueeze(-1) * error)
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t], state))
    return torch.stack(out, dim=1)


def kimi_delta(args, W, mesh):
    """74: per TP index, the recurrence over its CP group's whole sequence; rank (c, t) gets block c of the sum
    over the TP indices."""
    cp, tp = mesh["cp"], mesh["tp"]
    unit = lambda t: t / t.norm(dim=-1, keepdim=True).clamp_min(1e-12)  # noqa: E731
    a_log, dt_bias = f64(args[0][5]), f64(args[0][6])
    total = 0
    for t in range(tp):
        q, k, v, g, beta = (torch.cat([f64(args[c * tp + t][i]) for c in range(cp)], dim=1) for i in range(5))
        H, K = q.shape[2], q.shape[3]
        decay = torch.exp(-5.0 * torch.sigmoid(a_log.exp().view(H, 1) * (g + dt_bias.view(H, K))))
        total = total + delta_rule(unit(q) * K ** -0.5, unit(k), v, decay, torch.sigmoid(beta))
    return [total.chunk(cp, dim=1)[r // tp] for r in range(W)]


def gated_deltanet(args, W):
    """75: the recurrence over the whole sequence for every head, then each rank's block."""
    unit = lambda t: t / t.norm(dim=-1, keepdim=True).clamp_min(1e-6)  # noqa: E731
    q, k, v, gate, beta = (torch.cat([f64(a[i]) for a in args], dim=1) for i in range(5))
    a_log, dt_bias = (torch.cat([f64(a[i]) for a in args]) for i in (5, 6))
    K = q.shape[-1]
    decay = torch.exp(-a_log.exp() * torch.nn.functional.softplus(gate + dt_bias))
    out = delta_rule(unit(q) * K ** -0.5, unit(k), v, decay.unsqueeze(-1).expand(*decay.shape, K), beta)
    return list(out.chunk(W, dim=1))
