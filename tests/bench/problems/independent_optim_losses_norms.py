"""The independent computations of the training-step problems: norms (9, 18, 45: layer-norm backward,
tensor-parallel RMS norm, reduce-scatter then RMS norm), gradient clipping (21, 22), losses (23-25:
accumulated, load-balancing and importance-sampling losses; 58: OpenCLIP's sigmoid contrastive loss; 73:
vocab-parallel cross-entropy; 82-84: top-k / top-p filtered log-probabilities and their gradient) and
optimizers (40-43, 47, 48: DDP, ZeRO, fused Adam, FSDP and FSDP with TP on a small MLP; 63: the Kalman-filter
optimizer; 86: Muon's Newton-Schulz orthogonalization). Shared here: one float64 Adam step and the MLP's
float64 gradients.
"""

import math

import torch

from float64 import f64, total


def layernorm_backward(args, W):
    d_gamma = sum((f64(x) * f64(dy)).sum(dim=0) for x, dy in args)
    d_beta = sum(f64(dy).sum(dim=0) for _, dy in args)
    return [(d_gamma, d_beta)] * W


def rms_norm(args, W):
    x = torch.cat([f64(a[0]) for a in args], dim=1)  # the full (M, W*N) activations
    w = torch.cat([f64(a[1]) for a in args])
    eps = args[0][2]
    y = x / torch.sqrt(x.pow(2).mean(dim=1, keepdim=True) + eps) * w
    return list(y.chunk(W, dim=1))


def reducescatter_rmsnorm(args, W):
    gamma, eps = f64(args[0][1]), args[0][2]
    mean = total([a[0] for a in args]) / W
    outs = []
    for chunk in mean.chunk(W):
        x = chunk.view(-1, gamma.numel())
        outs.append(x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gamma)
    return outs


def clip(args, W):
    grads = [[f64(g) for g in a[0]] for a in args]
    max_norm, p = args[0][1], args[0][2]
    norm = sum((g.abs() ** p).sum() for gs in grads for g in gs) ** (1.0 / p)
    coef = max_norm / norm if norm > max_norm else 1.0
    return [norm] * W, [{0: [g * coef for g in gs]} for gs in grads]


def clip_ep(args, W):
    max_norm, p, ep_size = args[0][2], args[0][3], args[0][4]
    dense = [[f64(g) for g in a[0]] for a in args]
    expert = [[f64(g) / ep_size for g in a[1]] for a in args]
    norm = sum((g.abs() ** p).sum() for gs in dense + expert for g in gs) ** (1.0 / p)
    coef = max_norm / norm if norm > max_norm else 1.0
    return [norm] * W, [{0: [g * coef for g in d], 1: [g * coef for g in e]} for d, e in zip(dense, expert)]


def grad_acc_loss(args, W):
    total_tokens = f64(args[0][2])
    loss_sum = sum(f64(a[0]) * f64(a[1]) for a in args)
    outs = []
    for loss, n, _, grad_normalized, grad_sum in args:
        grad = f64(grad_normalized) * f64(n) / total_tokens + f64(grad_sum) * f64(n)
        outs.append((loss_sum / total_tokens, loss_sum, grad))
    return outs


def load_balancing_loss(args, W):
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


def importance_sampling_loss(args, W):
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


def ddp(args, W):
    params, exp_avg, exp_avg_sq = args[0][2:6], args[0][6:10], args[0][10:14]  # rank 0's
    grads = [sum(parts) / W for parts in zip(*(mlp_gradients(a[0], a[1], params) for a in args))]
    stepped = [adam_step(g, p, m, v, *args[0][14:]) for g, p, m, v in zip(grads, params, exp_avg, exp_avg_sq)]
    return [tuple(s[0] for s in stepped) + tuple(s[1] for s in stepped) + tuple(s[2] for s in stepped)] * W


def zero(args, W):
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


def fused_adam(args, W):
    return [torch.cat([adam_step(*a)[0] for a in args])] * W


def fsdp_step(args, W):
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


def fsdp_and_tp(args, W, mesh):
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


def newton_schulz(args, W):
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


def kalman(args, W):
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


def siglip(args, W):
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


def vocab_parallel_cross_entropy(args, W):
    """The loss from the whole vocabulary's logits; in place, every rank's slice minus the token maximum."""
    logits = torch.cat([f64(a[0]) for a in args], dim=-1)
    top = logits.amax(dim=-1, keepdim=True)
    target = args[0][1]
    loss = torch.logsumexp(logits, dim=-1) - logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return [loss] * W, [{0: f64(a[0]) - top} for a in args]


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


def log_prob_topk(args, W):
    log_probs, _ = filtered_log_probs(args)
    target = args[0][1]
    picked = log_probs.gather(-1, target.reshape(-1, 1)).reshape(target.shape)
    return [picked] * W


def log_prob_topk_backward(args, W):
    """(onehot(target) - p) * grad_output on each row's kept set, p the softmax over it; each rank's slice."""
    log_probs, keep = filtered_log_probs([a[:2] + a[3:] for a in args])  # without grad_output: 82's layout
    target, grad_output = args[0][1].reshape(-1), f64(args[0][2]).reshape(-1, 1)
    grad = -log_probs.exp()
    grad[torch.arange(grad.shape[0]), target] += 1.0
    grad = grad * grad_output * keep
    B, S, part = args[0][0].shape
    return [grad[:, r * part:(r + 1) * part].reshape(B, S, part) for r in range(W)]
