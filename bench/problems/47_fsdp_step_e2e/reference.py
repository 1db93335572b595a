"""One FSDP training step of a two-layer MLP: parameters, gradients and AdamW's moments sharded over the ranks.

The P parameters W1 (hidden, d_in), b1 (hidden,), W2 (d_out, hidden), b2 (d_out,), flattened in that order, are
split into W equal shards: rank r holds elements r*P/W .. (r+1)*P/W - 1 (`flat_param_shard`), AdamW's moments of
that shard (`exp_avg_shard`, `exp_avg_sq_shard`) and its batch X_local (n, d_in), y_local (n, d_out);
`param_shapes` gives the four shapes. Steps: all-gather the shards into the flat parameters; forward
relu(X W1^T + b1) W2^T + b2 and the mean-squared error against y_local; backward; reduce-scatter the flat
gradient (this rank receives the sum of its shard) and divide by W; one AdamW step on the shard (bias
corrections 1 - beta ** step, step >= 1, then the decoupled decay lr * weight_decay * the old shard; arithmetic in
the parameters' dtype). The inputs are not changed. Returns (the new shard, its new exp_avg, its new exp_avg_sq),
each (P/W,) in the parameters' dtype."""

import math
from typing import List, Sequence, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _mlp_gradients(X, y, params) -> List[torch.Tensor]:
    with torch.enable_grad():
        leaves = [p.detach().requires_grad_(True) for p in params]
        W1, b1, W2, b2 = leaves
        out = F.linear(F.relu(F.linear(X, W1, b1)), W2, b2)
        return list(torch.autograd.grad(F.mse_loss(out, y), leaves))


def solution(X_local: torch.Tensor, y_local: torch.Tensor, flat_param_shard: torch.Tensor,
             param_shapes: Sequence[Tuple[int, ...]], exp_avg_shard: torch.Tensor, exp_avg_sq_shard: torch.Tensor,
             lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
             step: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if step < 1:
        raise ValueError(f"step must be >= 1 (Adam's bias correction), got {step}")
    world = dist.get_world_size()
    shard = flat_param_shard.numel()
    sizes = [math.prod(s) for s in param_shapes]
    if sum(sizes) != shard * world:
        raise ValueError(f"param_shapes hold {sum(sizes)} parameters, not {world} shards of {shard}")

    flat = torch.empty(shard * world, dtype=flat_param_shard.dtype, device=flat_param_shard.device)
    dist.all_gather_into_tensor(flat, flat_param_shard.contiguous())
    params = [piece.view(shape) for piece, shape in zip(flat.split(sizes), param_shapes)]

    grads = _mlp_gradients(X_local, y_local, params)
    g = torch.empty_like(flat_param_shard)
    dist.reduce_scatter_tensor(g, torch.cat([t.reshape(-1) for t in grads]), op=dist.ReduceOp.SUM)
    g.div_(world)

    m = exp_avg_shard.mul(beta1).add_(g, alpha=1.0 - beta1)
    v = exp_avg_sq_shard.mul(beta2).addcmul_(g, g, value=1.0 - beta2)
    m_hat = m / (1.0 - math.pow(beta1, step))
    v_hat = v / (1.0 - math.pow(beta2, step))
    theta = flat_param_shard.add(m_hat.div(v_hat.sqrt().add(eps)), alpha=-lr)
    theta.add_(flat_param_shard, alpha=-lr * weight_decay)
    return theta, m, v
