"""One data-parallel (DDP) training step of a two-layer MLP with Adam.

Every rank holds its batch X_local (n, d_in), y_local (n, d_out), and a copy of the parameters W1 (hidden, d_in),
b1 (hidden,), W2 (d_out, hidden), b2 (d_out,) and of Adam's moments exp_avg_* and exp_avg_sq_* of each; only
rank 0's copies count. Steps: broadcast parameters and moments from rank 0; forward relu(X W1^T + b1) W2^T + b2
and the mean-squared error against y_local; backward; average the gradients over the ranks (all-reduce, then
divide by W); one Adam step per parameter (bias corrections 1 - beta ** step, step >= 1; arithmetic in the
parameters' dtype). The inputs are not changed. Returns the 12 tensors (W1, b1, W2, b2, their four exp_avg,
their four exp_avg_sq) after the step, in the parameters' dtype, the same on every rank."""

import math
from typing import List, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _broadcast_from_rank0(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
    """Rank 0's values of the tensors, as new tensors: one broadcast of their concatenation."""
    flat = torch.cat([t.reshape(-1) for t in tensors])
    dist.broadcast(flat, src=0)
    return [piece.view_as(t) for piece, t in zip(flat.split([t.numel() for t in tensors]), tensors)]


def _mlp_gradients(X, y, params) -> List[torch.Tensor]:
    with torch.enable_grad():
        leaves = [p.detach().requires_grad_(True) for p in params]
        W1, b1, W2, b2 = leaves
        out = F.linear(F.relu(F.linear(X, W1, b1)), W2, b2)
        return list(torch.autograd.grad(F.mse_loss(out, y), leaves))


def _adam(p, g, m, v, lr, beta1, beta2, eps, step):
    """Adam on new tensors: (p, m, v) after one step."""
    m = m.mul(beta1).add_(g, alpha=1.0 - beta1)
    v = v.mul(beta2).addcmul_(g, g, value=1.0 - beta2)
    update = (m / (1.0 - math.pow(beta1, step))).div_((v / (1.0 - math.pow(beta2, step))).sqrt_().add_(eps))
    return p.add(update.mul_(-lr)), m, v


def solution(X_local: torch.Tensor, y_local: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor,
             b2: torch.Tensor, exp_avg_W1: torch.Tensor, exp_avg_b1: torch.Tensor, exp_avg_W2: torch.Tensor,
             exp_avg_b2: torch.Tensor, exp_avg_sq_W1: torch.Tensor, exp_avg_sq_b1: torch.Tensor,
             exp_avg_sq_W2: torch.Tensor, exp_avg_sq_b2: torch.Tensor, lr: float, beta1: float, beta2: float,
             eps: float, step: int) -> Tuple[torch.Tensor, ...]:
    if step < 1:
        raise ValueError(f"step must be >= 1 (Adam's bias correction), got {step}")
    params = _broadcast_from_rank0([W1, b1, W2, b2])
    exp_avg = _broadcast_from_rank0([exp_avg_W1, exp_avg_b1, exp_avg_W2, exp_avg_b2])
    exp_avg_sq = _broadcast_from_rank0([exp_avg_sq_W1, exp_avg_sq_b1, exp_avg_sq_W2, exp_avg_sq_b2])

    grads = _mlp_gradients(X_local, y_local, params)
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat.div_(dist.get_world_size())
    grads = [piece.view_as(g) for piece, g in zip(flat.split([g.numel() for g in grads]), grads)]

    stepped = [_adam(p, g, m, v, lr, beta1, beta2, eps, step) for p, g, m, v in zip(params, grads, exp_avg, exp_avg_sq)]
    return tuple(s[0] for s in stepped) + tuple(s[1] for s in stepped) + tuple(s[2] for s in stepped)
