"""Every rank's expected answer, computed from all ranks' inputs in one process, in float64, without any
collective: the maths of each problem written a second time, plainly. `args[r]` is rank r's argument tuple.

expected(name, args, W, mesh) returns, per rank, the expected output and the expected in-place arguments
after the call ({position: value}; empty for problems without in-place results).
"""

import math

import torch


def f64(t):
    return t.to(torch.complex128 if t.is_complex() else torch.float64)


def total(tensors):
    return torch.stack([f64(t) for t in tensors]).sum(dim=0)


def _collectives(name, args, W):
    first = [a[0] for a in args]
    if name == "1_allreduce":
        return [total(first)] * W
    if name == "2_allgather":
        return [torch.stack([f64(t) for t in first])] * W
    if name == "3_broadcast":
        return [f64(first[0])] * W  # src defaults to 0
    if name == "4_reduce":
        dst = args[0][1]
        return [total(first) if r == dst else f64(first[r]) for r in range(W)]
    if name == "5_scatter":
        return [f64(first[0][r]) for r in range(W)]  # src defaults to 0
    if name == "6_gather":
        return [torch.stack([f64(t) for t in first]) if r == 0 else f64(first[r]) for r in range(W)]
    if name == "7_reducescatter":
        return list(total(first).chunk(W, dim=0))
    if name == "8_alltoall":
        return [torch.stack([f64(first[s][r]) for s in range(W)]) for r in range(W)]
    return None


def _layernorm_backward(args, W):
    d_gamma = sum((f64(x) * f64(dy)).sum(dim=0) for x, dy in args)
    d_beta = sum(f64(dy).sum(dim=0) for _, dy in args)
    return [(d_gamma, d_beta)] * W


def _allgather_gemm(args, W):
    """11, 12: the inner-dimension slices side by side, times each rank's own B."""
    A = torch.cat([f64(a[0]) for a in args], dim=1)
    return [A @ f64(args[r][1]) for r in range(W)]


def _gemm_allgather(args, W):
    return [torch.cat([f64(A) @ f64(B) for A, B in args], dim=1)] * W


def _ulysses(name, args, W):
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


def _combined_sharded_gemms(args, W):
    x = torch.cat([f64(a[0]) for a in args], dim=1)
    rows = x.shape[0] // W
    outs = []
    for r, (_, W1, W2) in enumerate(args):
        hidden = torch.nn.functional.silu(x[r * rows:(r + 1) * rows] @ f64(W1))
        outs.append(hidden @ f64(W2))
    return outs


def _rope_allgather(args, W):
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos.unsqueeze(2) + turned * sin.unsqueeze(2)

    rotated = [[rotate(f64(a[i]), f64(a[2]), f64(a[3])) for i in (0, 1)] for a in args]
    return [tuple(torch.cat([q_k[i] for q_k in rotated], dim=1) for i in (0, 1))] * W


def _fp8_dequantize(args, W):
    chunks = []
    for y, s, block in args:
        chunks.append((f64(y).reshape(-1, block) * f64(s).reshape(-1, 1)).view(y.shape))
    return [torch.stack([chunks[s][r] for s in range(W)]) for r in range(W)]


def _int8_mean(args, W):
    total = 0
    for g, block in args:
        x = f64(g).reshape(-1)
        n = x.numel()
        blocks = torch.cat([x, x.new_zeros(-n % block)]).view(-1, block)
        scale = f64((blocks.abs().amax(dim=1).to(torch.float32).clamp(min=1e-8) / 127.0)).unsqueeze(1)
        total = total + ((blocks / scale).round().clamp(-127, 127) * scale).view(-1)[:n]
    return [(total / W).view(args[0][0].shape)] * W


def _reducescatter_rmsnorm(args, W):
    gamma, eps = f64(args[0][1]), args[0][2]
    mean = total([a[0] for a in args]) / W
    outs = []
    for chunk in mean.chunk(W):
        x = chunk.view(-1, gamma.numel())
        outs.append(x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gamma)
    return outs


def _gemv_decode(args, W):
    return [torch.cat([f64(h) @ f64(w).T + f64(b) for h, w, b in args], dim=1)] * W


def _fp8_delayed_scale(x, history):
    """52, 53: the rolled history with max|x| appended, and x through e4m3 at the scale it gives."""
    history = torch.cat([history[1:], x.abs().max().view(1).to(history.dtype)])
    scale = f64(history.max().to(torch.float32).clamp(min=1e-12) / 448.0)
    return (f64(x) / scale).to(torch.float8_e4m3fn).to(torch.float64) * scale, history


def _fp8_collective(name, args, W):
    trips = [_fp8_delayed_scale(x, history) for x, history in args]
    if name == "52_fp8_reduce_scatter_grads":
        mean = sum(recon for recon, _ in trips) / W
        return [(chunk, f64(history)) for chunk, (_, history) in zip(mean.chunk(W), trips)]
    full = torch.cat([recon for recon, _ in trips])
    return [(full, f64(history)) for _, history in trips]


def _newton_schulz(args, W):
    steps = args[0][1]
    abc = [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
           (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)]  # the "quintic" schedule, the default
    x = torch.cat([f64(a[0]) for a in args], dim=1)
    x = x / x.norm()
    for step in range(steps):
        a, b, c = abc[step % len(abc)]
        G = x @ x.T
        x = a * x + (b * G + c * G @ G) @ x
    return list(x.chunk(W, dim=1))


def _gemm(name, args, W):
    full = sum(f64(A) @ f64(B) for A, B in args)
    return [full] * W if name == "13_gemm_allreduce" else list(full.chunk(W, dim=0))


def _rms_norm(args, W):
    x = torch.cat([f64(a[0]) for a in args], dim=1)  # the full (M, W*N) activations
    w = torch.cat([f64(a[1]) for a in args])
    eps = args[0][2]
    y = x / torch.sqrt(x.pow(2).mean(dim=1, keepdim=True) + eps) * w
    return list(y.chunk(W, dim=1))


def _all_to_all(args, W):
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


def _fp8_quantize(args, W):
    codes, scales = [], []
    for x, block in args:
        blocks = f64(x).reshape(x.shape[0], -1, block)
        s = (blocks.abs().amax(dim=-1) / 448.0).to(torch.float32)
        safe = torch.where(s == 0, torch.ones_like(s), s)
        codes.append((blocks / f64(safe).unsqueeze(-1)).to(torch.float32).to(torch.float8_e4m3fn).reshape(x.shape))
        scales.append(s)
    return [(torch.cat(codes), torch.cat(scales))] * W


def _clip(args, W):
    grads = [[f64(g) for g in a[0]] for a in args]
    max_norm, p = args[0][1], args[0][2]
    norm = sum((g.abs() ** p).sum() for gs in grads for g in gs) ** (1.0 / p)
    coef = max_norm / norm if norm > max_norm else 1.0
    return [norm] * W, [{0: [g * coef for g in gs]} for gs in grads]


def _grad_acc_loss(args, W):
    total_tokens = f64(args[0][2])
    loss_sum = sum(f64(a[0]) * f64(a[1]) for a in args)
    outs = []
    for loss, n, _, grad_normalized, grad_sum in args:
        grad = f64(grad_normalized) * f64(n) / total_tokens + f64(grad_sum) * f64(n)
        outs.append((loss_sum / total_tokens, loss_sum, grad))
    return outs


def _load_balancing_loss(args, W):
    """Every rank's loss from its logits (the routing probabilities rounded to the logits' dtype, as the
    reference's mean over bf16 probabilities is), then their mean."""
    losses = []
    for logits, experts, top_k, _ in args:
        probs = torch.softmax(f64(logits), dim=-1)
        chosen = probs.topk(top_k, dim=-1).indices
        share = torch.zeros(top_k, experts, dtype=torch.float64)
        for k in range(top_k):
            share[k] = torch.bincount(chosen[:, k], minlength=experts).to(torch.float64) / logits.shape[0]
        mean_prob = f64(probs.mean(dim=0).to(logits.dtype))
        losses.append(experts * (share * mean_prob).sum())
    return [sum(losses) / W] * W


def _importance_sampling_loss(args, W):
    """25: every rank's label log-probabilities from its float64 logits, the clamped ratios against the old
    log-probabilities, and the loss and metrics over all ranks' valid tokens."""
    per_rank, sums = [], torch.zeros(5, dtype=torch.float64)
    lo, hi, count = float("inf"), float("-inf"), 0
    for hidden, weight, labels, old, adv, ignore in args:
        valid = labels != ignore
        logp = torch.log_softmax(f64(hidden) @ f64(weight).T, dim=-1)
        logp = torch.where(valid, logp.gather(1, labels.clamp(min=0)[:, None])[:, 0], 0.0)
        delta = torch.where(valid, logp - f64(old), 0.0).clamp(-20.0, 20.0)
        ratio = delta.exp()
        pg = torch.where(valid, -ratio * f64(adv), 0.0)
        per_rank.append((logp, pg))
        sums += torch.stack([pg[valid].sum(), ratio[valid].sum(), (ratio - delta - 1)[valid].sum(),
                             -logp[valid].sum(), torch.zeros((), dtype=torch.float64)])
        count += int(valid.sum())
        if valid.any():
            lo, hi = min(lo, ratio[valid].min().item()), max(hi, ratio[valid].max().item())
    n = max(count, 1)
    metrics = torch.tensor([sums[1] / n, lo, hi, sums[2] / n, sums[3] / n], dtype=torch.float64)
    return [(sums[0] / n, None, logp, pg, metrics) for logp, pg in per_rank]


def adam_step(g, w, m, v, lr, beta1, beta2, eps, step):
    """One Adam step in float64: (new weights, new m, new v)."""
    m = beta1 * f64(m) + (1 - beta1) * f64(g)
    v = beta2 * f64(v) + (1 - beta2) * f64(g) ** 2
    update = (m / (1 - beta1 ** step)) / ((v / (1 - beta2 ** step)).sqrt() + eps)
    return f64(w) - lr * update, m, v


def mlp_gradients(X, y, params):
    """Gradients of the mean-squared error of relu(X W1^T + b1) W2^T + b2 against y, in float64."""
    leaves = [f64(p).requires_grad_(True) for p in params]
    W1, b1, W2, b2 = leaves
    out = torch.relu(f64(X) @ W1.T + b1) @ W2.T + b2
    loss = ((out - f64(y)) ** 2).mean()
    return [g.detach() for g in torch.autograd.grad(loss, leaves)]


def _ddp(args, W):
    params, exp_avg, exp_avg_sq = args[0][2:6], args[0][6:10], args[0][10:14]  # rank 0's
    grads = [sum(parts) / W for parts in zip(*(mlp_gradients(a[0], a[1], params) for a in args))]
    stepped = [adam_step(g, p, m, v, *args[0][14:]) for g, p, m, v in zip(grads, params, exp_avg, exp_avg_sq)]
    return [tuple(s[0] for s in stepped) + tuple(s[1] for s in stepped) + tuple(s[2] for s in stepped)] * W


def _zero(args, W):
    """ZeRO-1 and ZeRO-2 give the same maths: the averaged flat gradient, one Adam step per shard."""
    params = args[0][2:6]  # rank 0's
    flat = lambda ts: torch.cat([f64(t).reshape(-1) for t in ts])  # noqa: E731
    grad = sum(flat(mlp_gradients(a[0], a[1], params)) for a in args) / W
    shard = args[0][6].numel()
    stepped = [adam_step(grad[r * shard:(r + 1) * shard], flat(params)[r * shard:(r + 1) * shard], *args[r][6:])
               for r in range(W)]
    new = torch.cat([s[0] for s in stepped]).split([p.numel() for p in params])
    new = tuple(piece.view(p.shape) for piece, p in zip(new, params))
    return [new + (m, v) for _, m, v in stepped]


def _fused_adam(args, W):
    return [torch.cat([adam_step(*a)[0] for a in args])] * W


def _fsdp_step(args, W):
    """47: the whole parameter vector from every rank's shard, the averaged gradient, one AdamW step per shard
    (the decay on the old shard)."""
    shapes = args[0][3]
    flat = torch.cat([f64(a[2]) for a in args])
    params = [piece.view(shape) for piece, shape in zip(flat.split([math.prod(s) for s in shapes]), shapes)]
    grad = sum(torch.cat([g.reshape(-1) for g in mlp_gradients(a[0], a[1], params)]) for a in args) / W
    shard = args[0][2].numel()
    outs = []
    for r, (_, _, w, _, m, v, lr, beta1, beta2, eps, decay, step) in enumerate(args):
        new, m, v = adam_step(grad[r * shard:(r + 1) * shard], w, m, v, lr, beta1, beta2, eps, step)
        outs.append((new - lr * decay * f64(w), m, v))
    return outs


def _vocab_parallel_cross_entropy(args, W):
    """The loss from the whole vocabulary's logits; in place, every rank's slice minus the token maximum."""
    logits = torch.cat([f64(a[0]) for a in args], dim=-1)
    top = logits.amax(dim=-1, keepdim=True)
    target = args[0][1]
    loss = torch.logsumexp(logits, dim=-1) - logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return [loss] * W, [{0: f64(a[0]) - top} for a in args]


def _clip_ep(args, W):
    max_norm, p, ep_size = args[0][2], args[0][3], args[0][4]
    dense = [[f64(g) for g in a[0]] for a in args]
    expert = [[f64(g) / ep_size for g in a[1]] for a in args]
    norm = sum((g.abs() ** p).sum() for gs in dense + expert for g in gs) ** (1.0 / p)
    coef = max_norm / norm if norm > max_norm else 1.0
    return [norm] * W, [{0: [g * coef for g in d], 1: [g * coef for g in e]} for d, e in zip(dense, expert)]


def _fsdp_and_tp(args, W, mesh):
    """The whole weights from every rank's shard, then each FSDP block's rows through the full MLP."""
    n_fsdp, n_tp = mesh["fsdp"], mesh["tp"]
    rank_of = lambda f, t: f * n_tp + t  # noqa: E731 - row-major over (fsdp, tp)
    W1 = torch.cat([torch.cat([f64(args[rank_of(f, t)][1]) for t in range(n_tp)], dim=1) for f in range(n_fsdp)])
    W2 = torch.cat([torch.cat([f64(args[rank_of(f, t)][2]) for t in range(n_tp)], dim=1) for f in range(n_fsdp)])
    W3 = torch.cat([torch.cat([f64(args[rank_of(f, t)][3]) for f in range(n_fsdp)], dim=1) for t in range(n_tp)])
    outs = []
    for r in range(W):
        x = f64(args[r][0])
        outs.append((torch.nn.functional.silu(x @ W1) * (x @ W2)) @ W3)
    return outs


def _kalman(args, W):
    lam, nue = args[0][4], args[0][5]
    A = 1 / sum(lam + (h.T @ p @ h).item() for a in args for h, p in zip(a[0], a[3]))
    new_weights, new_P = [], []
    for H, error, weights, P, _, _ in args:
        K = [p @ h for h, p in zip(H, P)]
        new_weights.append([w + A * error.item() * k for w, k in zip(weights, K)])
        new_P.append([(p - A * (k @ k.T)) / lam for p, k in zip(P, K)])
    every = [w for ws in new_weights for w in ws]
    lam_next = torch.tensor(nue * lam + 1 - nue, dtype=torch.float64)
    return ([(every, new_P[r], lam_next) for r in range(W)],
            [{2: new_weights[r], 3: new_P[r]} for r in range(W)])


def _ring_attention(args, W, mesh):
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


def attention(q, k, v, causal, scale=None):
    """Softmax attention of (B, T, H, D) float64 tensors over the whole sequence; scale None: 1 / sqrt(D)."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        scores = scores.masked_fill(torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)


def _ulysses_head_mixing(args, W):
    """39: every rank's own tokens, projected with its own weights; within each token, softmax attention among
    the heads of each of the W head groups (PKB's attention step), then the output projection."""
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


def _cp_attention(args, W):
    """54: every rank's block of one causal attention over the concatenated sequence."""
    q, k, v = (torch.cat([f64(a[i]) for a in args], dim=1) for i in range(3))
    return list(attention(q, k, v, args[0][4], args[0][3]).chunk(W, dim=1))


def _pipeline_attention(args, W, mesh):
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


def _ring_attention_backward(args, W, mesh):
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


def _siglip(args, W):
    """58: each rank's images against its own texts (matching pairs on the diagonal) and every other rank's
    texts (all pairs negative)."""
    logsig = torch.nn.functional.logsigmoid
    outs = []
    for r, (images, _, scale, bias, _) in enumerate(args):
        images = f64(images)
        B = images.shape[0]
        loss = 0.0
        for j in range(W):
            logits = scale * images @ f64(args[j][1]).T + bias
            signs = 2 * torch.eye(B, dtype=torch.float64) - 1 if j == r else -torch.ones_like(logits)
            loss = loss - logsig(signs * logits).sum() / B
        outs.append(loss)
    return outs


def _distributed_rfft(args, W):
    """59: the whole field from every rank's columns, its 2-D real FFT (orthonormal), each rank's band of rows."""
    field = torch.cat([f64(a[0]) for a in args], dim=2)
    spectrum = torch.fft.rfft2(field, dim=(1, 2), norm="ortho")
    return list(spectrum.chunk(W, dim=1))


def _distributed_irfft(args, W):
    """60: the whole half spectrum from every rank's rows, its 2-D inverse real FFT (orthonormal), each rank's
    block of columns."""
    spectrum = torch.cat([f64(a[0]) for a in args], dim=-2)
    H, X = args[0][1]
    field = torch.fft.irfft2(spectrum, s=(H, X), dim=(-2, -1), norm="ortho")
    return list(field.chunk(W, dim=-1))


def _neighbor_sampling(args, W):
    """64: per rank, hop by hop, each frontier node's first min(k, degree) neighbours as its owner stores them;
    nodes kept in order of first appearance; edges relabelled to positions in that order."""
    def neighbours(v):
        ptr, col = args[int(args[0][4][v])][2], args[int(args[0][4][v])][3]
        return list(range(int(ptr[v]), int(ptr[v + 1]))), col
    outs = []
    for r in range(W):
        seeds, fanouts = args[r][0].tolist(), args[r][1]
        nodes, frontier, rows, cols, edges = list(seeds), list(seeds), [], [], []
        for k in fanouts:
            found = []
            for v in frontier:
                ids, col = neighbours(v)
                for e in ids[:k]:
                    found.append((int(col[e]), v, e))
            if not found:
                break
            seen, frontier = set(nodes), []
            for u, _, _ in found:
                if u not in seen:
                    seen.add(u)
                    frontier.append(u)
            nodes += frontier
            rows += [u for u, _, _ in found]
            cols += [v for _, v, _ in found]
            edges += [e for _, _, e in found]
        where = {v: i for i, v in enumerate(nodes)}
        as_tensor = lambda xs: torch.tensor(xs, dtype=torch.int64)  # noqa: E731
        outs.append((as_tensor(nodes), as_tensor([where[u] for u in rows]), as_tensor([where[v] for v in cols]),
                     as_tensor(edges)))
    return outs


def _gaussian_splatting(args, W):
    """61: every (camera, Gaussian) pair projected in float64 (covariance R S^2 R^T from the unit quaternion, camera
    frame, perspective Jacobian with the frustum clamp, eps2d on the diagonal); pairs whose depth is in range and
    whose radius box meets the image are kept. Rank r gets, sender by sender, the pairs of its camera; Gaussian
    ids shifted by the Gaussians of ranks before r (PKB's offsets)."""
    IW, IH, eps2d, near, far = args[0][7:12]
    counts = [a[0].shape[0] for a in args]
    outs = []
    for r in range(W):
        view, K = f64(args[r][5][0]), f64(args[r][6][0])
        fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
        pieces = [[] for _ in range(8)]
        for s in range(W):
            mu, q, sc = f64(args[s][0]), f64(args[s][1]), f64(args[s][2])
            w, x, y, z = (q / q.norm(dim=1, keepdim=True)).unbind(1)
            R = torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                             2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                             2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], dim=1).view(-1, 3, 3)
            cov = R @ torch.diag_embed(sc * sc) @ R.transpose(1, 2)
            pc = mu @ view[:3, :3].T + view[:3, 3]
            covc = view[:3, :3] @ cov @ view[:3, :3].T
            tz = pc[:, 2]
            tx = tz * (pc[:, 0] / tz).clamp(-(cx / fx + 0.15 * IW / fx), (IW - cx) / fx + 0.15 * IW / fx)
            ty = tz * (pc[:, 1] / tz).clamp(-(cy / fy + 0.15 * IH / fy), (IH - cy) / fy + 0.15 * IH / fy)
            J = torch.zeros(len(tz), 2, 3, dtype=torch.float64)
            J[:, 0, 0], J[:, 0, 2] = fx / tz, -fx * tx / tz ** 2
            J[:, 1, 1], J[:, 1, 2] = fy / tz, -fy * ty / tz ** 2
            c2 = J @ covc @ J.transpose(1, 2) + eps2d * torch.eye(2, dtype=torch.float64)
            det = (c2[:, 0, 0] * c2[:, 1, 1] - c2[:, 0, 1] * c2[:, 1, 0]).clamp(min=1e-10)
            conic = torch.stack([c2[:, 1, 1] / det, -(c2[:, 0, 1] + c2[:, 1, 0]) / 2 / det, c2[:, 0, 0] / det], dim=1)
            m2 = torch.stack([fx * pc[:, 0] / tz + cx, fy * pc[:, 1] / tz + cy], dim=1)
            radius = torch.ceil(3.33 * torch.stack([c2[:, 0, 0], c2[:, 1, 1]], dim=1).sqrt())
            keep = (tz > near) & (tz < far) & (m2[:, 0] + radius[:, 0] > 0) & (m2[:, 0] - radius[:, 0] < IW) \
                & (m2[:, 1] + radius[:, 1] > 0) & (m2[:, 1] - radius[:, 1] < IH)
            ids = torch.nonzero(keep).reshape(-1)
            for i, v in enumerate([torch.zeros(len(ids), dtype=torch.float64), f64(ids + sum(counts[:r])),
                                   radius[ids], m2[ids], tz[ids], conic[ids], f64(args[s][3])[ids],
                                   f64(args[s][4])[ids]]):
                pieces[i].append(v)
        outs.append(tuple(torch.cat(p) for p in pieces))
    return outs


def _spherical_conv(args, W, mesh):
    polar, azimuth = mesh["polar"], mesh["azimuth"]
    rank_of = lambda p, a: p * azimuth + a  # noqa: E731 - row-major over (polar, azimuth)
    # The whole sphere: x of rank (p, a) is latitude band p, longitude range a.
    x = torch.cat([torch.cat([f64(args[rank_of(p, a)][0]) for a in range(azimuth)], dim=3) for p in range(polar)],
                  dim=2)
    B, C, nlat, nlon = x.shape
    lat_band, lon_share, chan_share = nlat // polar, nlon // azimuth, C // azimuth
    K, nlat_out = args[0][3][0], args[0][3][1]
    nlon_out = args[0][6]
    step = nlon // nlon_out
    # After the first transpose, channel share a of latitude band p is contracted with rank (p, a)'s filter,
    # and the polar sum adds the bands.
    y = torch.zeros(B, C, K, nlat_out, nlon_out, dtype=torch.float64)
    for p in range(polar):
        for a in range(azimuth):
            _, idx, val, size = args[rank_of(p, a)][:4]
            psi = torch.sparse_coo_tensor(idx, f64(val), size=tuple(size)).to_dense()  # (K, nlat_out, band*nlon)
            channels = slice(a * chan_share, (a + 1) * chan_share)
            band = x[:, channels, p * lat_band:(p + 1) * lat_band]  # (B, c, band, nlon)
            for q in range(nlon_out):
                rolled = torch.roll(band, -q * step, dims=3).reshape(B, chan_share, -1)
                y[:, channels, :, :, q] += torch.einsum("kls,bcs->bckl", psi, rolled)
    outs = []
    for r in range(W):
        p, a = divmod(r, azimuth)
        weight, bias = f64(args[r][4]), f64(args[r][10])
        mine = y[:, :, :, p * lat_band:(p + 1) * lat_band, a * lon_share:(a + 1) * lon_share]
        outs.append(torch.einsum("bckxy,ock->boxy", mine, weight) + bias.view(1, -1, 1, 1))
    return outs


def _embedding_lookup(args, W):
    table = torch.cat([f64(a[1]) for a in args])
    rows = args[0][1].shape[0]
    # Each rank's ids grouped by owner (rank 0's first), in their order within an owner.
    return [table[sorted(a[0].tolist(), key=lambda i: i // rows)] for a in args]


def _token_preprocess(args, W):
    E = args[0][1]
    local = E // W
    counts = torch.stack([a[0].to(torch.float64).sum(dim=(1, 2)) for a in args])  # (rank, expert)
    outs = []
    for r in range(W):
        mine = counts[:, r * local:(r + 1) * local]
        outs.append((counts[r].view(W, local).sum(dim=1), mine.sum(dim=1), mine, mine.sum(dim=0)))
    return outs


def _moe_dispatch(args, W):
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


def _moe_combine(args, W):
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


def _lora_grads_sum(args, W):
    return [tuple(total([a[i] for a in args]) for i in range(3))] * W


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


def _feature_exchange(args, W):
    return _rotated_chunks(args, W, lambda s: f64(args[s][0][args[s][1]]), 3, 2)


def _feature_exchange_backward(args, W):
    received = _rotated_chunks(args, W, lambda s: f64(args[s][0]), 3, 4)
    outs = []
    for r in range(W):
        table = torch.zeros((args[r][2], received[r].shape[1]), dtype=torch.float64)
        for row, seed in zip(received[r], args[r][1].tolist()):
            table[seed] += row
        outs.append(table)
    return outs


def _sparse_embedding_route(args, W):
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


def _kjt_all_to_all(args, W):
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


def filtered_log_probs(args):
    """Every token's (B*S, V) logits over the whole vocabulary, top-k / top-p filtered as the problem defines the
    filter (written from the definition: the kept set of each row, in float64 but on the bf16 probabilities
    the reference sums), then log-softmax in float64."""
    logits = torch.cat([a[0] for a in args], dim=-1)
    V = logits.shape[-1]
    rows = logits.reshape(-1, V)
    top_k, top_p = args[0][3], args[0][4]
    keep = torch.zeros_like(rows, dtype=torch.bool)
    for i, row in enumerate(rows):
        kth = row.to(torch.float64).sort(descending=True).values[min(top_k, V) - 1]
        kept = row.to(torch.float64) >= kth
        candidates = row.masked_fill(~kept, float("-inf"))
        ascending, order = candidates.sort()
        mass = ascending.softmax(dim=-1).cumsum(dim=-1)  # in the logits' dtype, as the filter sums them
        above = mass > 1 - top_p
        above[-1] = True
        keep[i, order[above]] = True
        keep[i] &= kept
    out = f64(rows).masked_fill(~keep, float("-inf"))
    return torch.log_softmax(out, dim=-1), keep


def _log_prob_topk(args, W):
    log_probs, _ = filtered_log_probs(args)
    target = args[0][1]
    picked = log_probs.gather(-1, target.reshape(-1, 1)).reshape(target.shape)
    return [picked] * W


def _log_prob_topk_backward(args, W):
    """(onehot(target) - p) * grad_output on each row's kept set, p the softmax over it; each rank's slice."""
    log_probs, keep = filtered_log_probs([a[:2] + a[3:] for a in args])  # without grad_output: 82's layout
    target, grad_output = args[0][1].reshape(-1), f64(args[0][2]).reshape(-1, 1)
    grad = -log_probs.exp()
    grad[torch.arange(grad.shape[0]), target] += 1.0
    grad = grad * grad_output * keep
    B, S, part = args[0][0].shape
    return [grad[:, r * part:(r + 1) * part].reshape(B, S, part) for r in range(W)]
def _tiled_decode(args, W):
    """78: the tile grid over the latent's (t, h, w); tile k (row-major) is cut from the latent of the rank that
    the deal (sizes descending, round-robin) gives it, upsampled trilinearly, ramped into its unramped
    predecessor along t, h, w in turn, cropped to the stride and stitched."""
    z, TL, TH, TW, s_overlap, t_overlap, up, tup = args[0][:8]
    size, overlap, scale = (TL, TH, TW), (t_overlap, s_overlap, s_overlap), (tup, up, up)
    stride = [int(n * (1 - f)) for n, f in zip(size, overlap)]
    ramp = [int(n * k * f) for n, k, f in zip(size, scale, overlap)]
    counts = [-(-z.shape[2 + d] // stride[d]) for d in range(3)]
    grid = [(t, h, w) for t in range(counts[0]) for h in range(counts[1]) for w in range(counts[2])]
    cut = lambda zz, at: zz[:, :, at[0] * stride[0]:at[0] * stride[0] + TL, at[1] * stride[1]:at[1] * stride[1] + TH,
                             at[2] * stride[2]:at[2] * stride[2] + TW]  # noqa: E731
    by_size = sorted(range(len(grid)), key=lambda k: -cut(z, grid[k]).numel())
    owner = {k: pos % W for pos, k in enumerate(by_size)}
    decoded = {at: torch.nn.functional.interpolate(f64(cut(args[owner[k]][0], at)), scale_factor=scale,
                                                   mode="trilinear", align_corners=False)[:, :3]
               for k, at in enumerate(grid)}
    cropped = {}
    for at in grid:
        tile = decoded[at].clone()
        for d in range(3):
            if at[d] == 0:
                continue
            before = decoded[tuple(c - (i == d) for i, c in enumerate(at))]
            n = min(before.shape[2 + d], tile.shape[2 + d], ramp[d])
            w = (torch.arange(n, dtype=torch.float64) / n).view([-1] + [1] * (2 - d)) if n else None
            if n:
                head = tile.narrow(2 + d, 0, n)
                head.copy_(before.narrow(2 + d, before.shape[2 + d] - n, n) * (1 - w) + head * w)
        keep = [n * k - r for n, k, r in zip(size, scale, ramp)]
        cropped[at] = tile[:, :, :keep[0], :keep[1], :keep[2]]
    video = torch.cat([torch.cat([torch.cat([cropped[(t, h, w)] for w in range(counts[2])], dim=4)
                                  for h in range(counts[1])], dim=3) for t in range(counts[0])], dim=2)
    return [video] * W


def _mask_suppression(args, W):
    """81: all masks in rank order; for each pair i < j whose binary masks overlap by IoU >= the threshold, the
    one occluded later (earlier with reverse) is dropped when the other was occluded at all."""
    masks = torch.cat([f64(a[0]) for a in args])
    scores = torch.cat([f64(a[1]) for a in args])
    last, threshold, reverse = args[0][3].tolist(), args[0][4], args[0][5]
    on = [set(torch.nonzero(m.reshape(-1) > 0).reshape(-1).tolist()) for m in masks]
    drop = [False] * len(on)
    for i in range(len(on)):
        for j in range(i + 1, len(on)):
            union = len(on[i] | on[j])
            if len(on[i] & on[j]) / max(union, 1) < threshold:
                continue
            later, earlier = (j, i) if (last[j] > last[i]) != reverse and last[j] != last[i] else (i, j)
            if last[later] != last[earlier] and last[earlier] > -1:
                drop[later] = True
    kept = masks.clone()
    kept[torch.tensor(drop, dtype=torch.bool)] = -10.0
    return [(kept, scores, torch.tensor(drop, dtype=torch.float64))] * W


def zigzag_join(parts, W, dim):
    """The whole sequence from W zigzag shards: rank r holds chunks r and 2W-1-r, in that order, along dim."""
    chunks = [None] * (2 * W)
    for r, part in enumerate(parts):
        chunks[r], chunks[2 * W - 1 - r] = part.chunk(2, dim=dim)
    return torch.cat(chunks, dim=dim)


def zigzag_split(full, W, dim):
    chunks = full.chunk(2 * W, dim=dim)
    return [torch.cat([chunks[r], chunks[2 * W - 1 - r]], dim=dim) for r in range(W)]


def _halo_conv1d(args, W):
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


def _range_attention(args, W):
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


def _halo_conv2d(args, W):
    """87: the ranks' rows stacked into one image, each rank's convolution over all of it, that rank's rows."""
    image = torch.cat([f64(a[0]) for a in args], dim=2)
    rows = args[0][0].shape[2]
    outs = []
    for r, (_, weight, bias, stride, padding, _) in enumerate(args):
        y = torch.nn.functional.conv2d(image, f64(weight), f64(bias), stride=stride, padding=padding)
        outs.append(y[:, :, r * rows:(r + 1) * rows])
    return outs


def _hyena_long_conv(args, W):
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


def _kimi_delta(args, W, mesh):
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


def _gated_deltanet(args, W):
    """75: the recurrence over the whole sequence for every head, then each rank's block."""
    unit = lambda t: t / t.norm(dim=-1, keepdim=True).clamp_min(1e-6)  # noqa: E731
    q, k, v, gate, beta = (torch.cat([f64(a[i]) for a in args], dim=1) for i in range(5))
    a_log, dt_bias = (torch.cat([f64(a[i]) for a in args]) for i in (5, 6))
    K = q.shape[-1]
    decay = torch.exp(-a_log.exp() * torch.nn.functional.softplus(gate + dt_bias))
    out = delta_rule(unit(q) * K ** -0.5, unit(k), v, decay.unsqueeze(-1).expand(*decay.shape, K), beta)
    return list(out.chunk(W, dim=1))


def _feature_fetch(args, W):
    """68: each rank's ids looked up in the whole table (the shards stacked), times its own projection."""
    table = torch.cat([f64(a[0]) for a in args])
    return [table[ids] @ f64(proj) for _, ids, proj, _, _ in args]


def _conv3d_allreduce(args, W):
    """76: the convolution over all ranks' input channels at once (the weight slices side by side), plus bias."""
    x = torch.cat([f64(a[0]) for a in args], dim=1)
    weight = torch.cat([f64(a[1]) for a in args], dim=1)
    _, _, bias, stride, padding, dilation, groups, _ = args[0]
    out = torch.nn.functional.conv3d(x, weight, f64(bias), stride, padding, dilation, groups)
    return [out] * W


class Neighbours:
    """79's labels: for each query (row) the similarity every label stands for, and the similarities the k
    selected labels must have, position by position."""

    def __init__(self, keys, want):
        self.keys, self.want = keys, want


def _knn(args, W):
    """Every query against the whole training set; the k largest similarities from the largest. Labels are
    judged by the similarity they stand for (ties may come in any order)."""
    train = torch.cat([f64(a[1]) for a in args], dim=1)
    labels = torch.cat([a[2] for a in args], dim=1).view(-1)
    outs = []
    for a in args:
        similarity = f64(a[0]) @ train
        keys = torch.empty_like(similarity)
        keys[:, labels] = similarity
        best = similarity.sort(dim=1, descending=True).values[:, :a[3]]
        outs.append((best, Neighbours(keys, best)))
    return outs


def _sinkhorn(args, W):
    """80: the balancing on the whole (P, all samples) matrix in float64, each rank's columns back as rows."""
    temp, iterations = args[0][1], args[0][3]
    mass = torch.exp(torch.cat([f64(a[0]) for a in args]) / temp).t()
    samples = float(sum(int(a[2].item()) for a in args))
    mass = mass / mass.sum()
    for _ in range(iterations):
        mass = mass / mass.sum(dim=1, keepdim=True) / mass.shape[0]
        mass = mass / mass.sum(dim=0, keepdim=True) / samples
    mass = mass * samples
    return list(mass.t().split([a[0].shape[0] for a in args]))


def _sample_sort(args, W):
    """85: all ranks' values sorted; rank r's share starts at r·(T // W) + min(r, T % W)."""
    ordered = torch.cat([f64(a[0]) for a in args]).sort().values
    T = ordered.numel()
    return list(ordered.split([T // W + (1 if r < T % W else 0) for r in range(W)]))


class Ties:
    """The ranks each element may take: lo <= rank <= hi (tensors of the output's shape)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def tie_intervals(args, W):
    """For every positive of every rank (in rank order): the 1-based ranks it may take among its candidates
    sorted by bf16 sigmoid from the largest, ties in either order."""
    keys = torch.cat([torch.sigmoid(torch.cat([a[0].view(-1, 1), a[1]], dim=1)) for a in args]).to(torch.float64)
    item = keys[:, :1]
    before = (keys > item).sum(dim=1)
    tied = (keys == item).sum(dim=1)
    return Ties(before + 1, before + tied)


def expected(name, args, W, mesh):
    """Per rank: (expected output, {in-place position: expected value after the call})."""
    none = [{} for _ in range(W)]
    outs = _collectives(name, args, W)
    if outs is not None:
        return outs, none
    if name == "9_layernorm_backward":
        return _layernorm_backward(args, W), none
    if name == "10_embedding_lookup":
        return _embedding_lookup(args, W), none
    if name in ("11_allgather_gemm_AT", "12_allgather_gemm"):
        return _allgather_gemm(args, W), none
    if name in ("13_gemm_allreduce", "16_gemm_reducescatter"):
        return _gemm(name, args, W), none
    if name == "14_gemm_allgather":
        return _gemm_allgather(args, W), none
    if name == "18_tp_rms_norm":
        return _rms_norm(args, W), none
    if name == "26_moe_token_preprocess":
        return _token_preprocess(args, W), none
    if name == "27_moe_all2all_primitive":
        return _all_to_all(args, W), none
    if name == "15_combined_sharded_gemms":
        return _combined_sharded_gemms(args, W), none
    if name == "17_rope_allgather":
        return _rope_allgather(args, W), none
    if name == "19_blocked_fp8_quantize":
        return _fp8_quantize(args, W), none
    if name == "20_blocked_fp8_dequantize":
        return _fp8_dequantize(args, W), none
    if name == "21_clip_grad_norm_no_ep":
        return _clip(args, W)
    if name == "22_clip_grad_norm_ep":
        return _clip_ep(args, W)
    if name == "23_grad_acc_loss":
        return _grad_acc_loss(args, W), none
    if name == "24_load_balancing_loss_fn":
        return _load_balancing_loss(args, W), none
    if name == "25_importance_sampling_loss":
        return _importance_sampling_loss(args, W), none
    if name.split("_")[0] in ("33", "34", "35", "36", "37", "38"):
        return _ulysses(name, args, W), none
    if name == "39_ulysses_attention_e2e":
        return _ulysses_head_mixing(args, W), none
    if name == "44_quantized_grad_allreduce":
        return _int8_mean(args, W), none
    if name == "45_reducescatter_fused_rmsnorm":
        return _reducescatter_rmsnorm(args, W), none
    if name == "46_gemv_decode":
        return _gemv_decode(args, W), none
    if name in ("52_fp8_reduce_scatter_grads", "53_fp8_allgather_params"):
        return _fp8_collective(name, args, W), none
    if name == "40_ddp":
        return _ddp(args, W), none
    if name in ("41_zero1_optimizer_shard", "42_zero2_optimizer_shard_grad"):
        return _zero(args, W), none
    if name == "43_fused_adam_grad_unshard_allgather":
        return _fused_adam(args, W), none
    if name == "47_fsdp_step_e2e":
        return _fsdp_step(args, W), none
    if name == "48_fsdp_and_tp":
        return _fsdp_and_tp(args, W, mesh), none
    if name == "54_ring_attention":
        return _cp_attention(args, W), none
    if name == "28_moe_pre_all2all":
        return _moe_dispatch(args, W), none
    if name == "29_moe_post_all2all":
        return _moe_combine(args, W), none
    if name == "30_moe_epgroupgemm_lora_backward":
        return _lora_grads_sum(args, W), none
    if name == "31_fused_moe_fwd":
        return moe_forward(args, W, W), none
    if name == "32_fused_moe_fwd_lora":
        return moe_forward(args, W, W, lora=True), none
    if name in ("49_moe_ep_balanced", "50_moe_ep_wide"):
        return moe_forward(args, W, W), none
    if name == "51_moe_ep_narrow":
        experts = args[0][-3]  # EP groups of as many ranks as experts
        return moe_forward(args, W, min(W, experts)), none
    if name == "55_ring_attention_tp":
        return _ring_attention(args, W, mesh), none
    if name == "56_ring_attention_pp":
        return _pipeline_attention(args, W, mesh), none
    if name == "57_ring_attention_backward_dp":
        return _ring_attention_backward(args, W, mesh), none
    if name == "58_openclip_contrastive_loss":
        return _siglip(args, W), none
    if name == "59_physicsnemo_distributed_rfft":
        return _distributed_rfft(args, W), none
    if name == "60_physicsnemo_distributed_irfft":
        return _distributed_irfft(args, W), none
    if name == "61_gsplat_3d_gaussian_splatting":
        return _gaussian_splatting(args, W), none
    if name == "62_torchharmonics_spherical_convolution":
        return _spherical_conv(args, W, mesh), none
    if name == "63_deepmd_kalman_filter_optimizer":
        return _kalman(args, W)
    if name == "64_gnn_neighbor_sampling":
        return _neighbor_sampling(args, W), none
    if name == "65_gnn_feature_exchange_all2all":
        return _feature_exchange(args, W), none
    if name == "66_gnn_feature_exchange_all2all_backward":
        return _feature_exchange_backward(args, W), none
    if name == "67_gnn_sparse_embedding_all2all":
        return _sparse_embedding_route(args, W), none
    if name == "68_gnn_sparse_feature_fetch_projection":
        return _feature_fetch(args, W), none
    if name == "69_gnn_negative_scoring":
        return [tie_intervals(args, W)] * W, none
    if name == "70_torchrec_kjt_all2all":
        return _kjt_all_to_all(args, W), none
    if name == "73_vocab_parallel_cross_entropy_loss":
        return _vocab_parallel_cross_entropy(args, W)
    if name in ("82_vocab_parallel_log_prob_topk", "83_vocab_parallel_log_prob_topk_chunked"):
        return _log_prob_topk(args, W), none  # chunking changes which rank computes a token, not its value
    if name == "84_vocab_parallel_log_prob_topk_chunked_backward":
        return _log_prob_topk_backward(args, W), none
    if name == "71_hyena_conv1d_boundary_exchange":
        return _halo_conv1d(args, W), none
    if name == "72_hyena_forward_cp":
        return _hyena_long_conv(args, W), none
    if name == "74_fla_kimi_delta_attention_cp_tp":
        return _kimi_delta(args, W, mesh), none
    if name == "75_fla_gated_deltanet_cp":
        return _gated_deltanet(args, W), none
    if name == "76_opensora_conv3d_allreduce":
        return _conv3d_allreduce(args, W), none
    if name == "79_dinov2_distributed_knn":
        return _knn(args, W), none
    if name == "80_dinov2_distributed_sinkhorn_knopp":
        return _sinkhorn(args, W), none
    if name == "85_distributed_sample_sort":
        return _sample_sort(args, W), none
    if name == "77_magi1_cso_async_attention":
        return _range_attention(args, W), none
    if name == "78_magi1_tile_parallel_vae_decode":
        return _tiled_decode(args, W), none
    if name == "81_sam3_allgather_iou_suppression":
        return _mask_suppression(args, W), none
    if name == "86_tp_muon_orthogonalization":
        return _newton_schulz(args, W), none
    if name == "87_conv2d_boundary_exchange":
        return _halo_conv2d(args, W), none
    raise AssertionError(f"no independent computation for {name}")


def bf16_gemm_bound(name, args, W):
    """Worst-case error of a bf16 sum of W bf16-rounded partial products: each of the W roundings of a partial
    and of a partial sum is at most 2^-9 of the magnitudes involved (doubled for slack)."""
    magnitude = sum((f64(A) @ f64(B)).abs() for A, B in args)
    bound = W * 2.0 ** -8 * magnitude
    return [bound] * W if name == "13_gemm_allreduce" else list(bound.chunk(W, dim=0))
