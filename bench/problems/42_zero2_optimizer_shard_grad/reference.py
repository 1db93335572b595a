"""One ZeRO-2 training step of a two-layer MLP: gradients and Adam's moments sharded over the ranks.

Every rank holds its batch X_local (n, d_in), y_local (n, d_out) and a copy of the parameters W1 (hidden, d_in),
b1 (hidden,), W2 (d_out, hidden), b2 (d_out,), of which only rank 0's counts; and Adam's moments exp_avg_part,
exp_avg_sq_part (P / W,) of its shard: elements r*P/W .. (r+1)*P/W - 1 of the P parameters flattened in the order
W1, b1, W2, b2. Steps: broadcast the flat parameters from rank 0; forward relu(X W1^T + b1) W2^T + b2 and the
mean-squared error against y_local; backward; reduce-scatter the flat gradient (this rank receives the sum of
its shard) and divide by W; one Adam step on this rank's shard (bias corrections 1 - beta ** step, step >= 1;
arithmetic in the parameters' dtype); all-gather the updated shards. The inputs are not changed. Returns (W1, b1,
W2, b2) after the step (the same on every rank) and this rank's new exp_avg and exp_avg_sq shards, all in the
parameters' dtype."""

import math
from typing import List, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _mlp_gradients(X, y, params) -> List[torch.Tensor]:
    with torch.enable_grad():
        leaves = [p.detach().requires_grad_(True) for p in params]
        W1, b1, W2, b2 = leaves
        out = F.linear(F.relu(F.linear(X, W1, b1)), W2, b2)
        return list(torch.autograd.grad(F.mse_loss(out, y), leaves))


def _split_like(flat: torch.Tensor, like: List[torch.Tensor]) -> List[torch.Tensor]:
    return [piece.view_as(t) for piece, t in zip(flat.split([t.numel() for t in like]), like)]


def solution(X_local: torch.Tensor, y_local: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor,
             b2: torch.Tensor, exp_avg_part: torch.Tensor, exp_avg_sq_part: torch.Tensor, lr: float, beta1: float,
             beta2: float, eps: float, step: int) -> Tuple[torch.Tensor, ...]:
    if step < 1:
        raise ValueError(f"step must be >= 1 (Adam's bias correction), got {step}")
    world, rank = dist.get_world_size(), dist.get_rank()
    templates = [W1, b1, W2, b2]
    flat_params = torch.cat([t.reshape(-1) for t in templates])
    shard = exp_avg_part.numel()
    if flat_params.numel() != shard * world:
        raise ValueError(f"{flat_params.numel()} parameters do not split into {world} shards of {shard}")
    dist.broadcast(flat_params, src=0)

    grads = _mlp_gradients(X_local, y_local, _split_like(flat_params, templates))
    g = torch.empty(shard, dtype=flat_params.dtype, device=flat_params.device)
    dist.reduce_scatter_tensor(g, torch.cat([t.reshape(-1) for t in grads]), op=dist.ReduceOp.SUM)
    g.div_(world)

    mine = slice(rank * shard, (rank + 1) * shard)
    m = exp_avg_part.mul(beta1).add_(g, alpha=1.0 - beta1)
    v = exp_avg_sq_part.mul(beta2).addcmul_(g, g, value=1.0 - beta2)
    update = (m / (1.0 - math.pow(beta1, step))).div_((v / (1.0 - math.pow(beta2, step))).sqrt_().add_(eps))
    new_shard = flat_params[mine].add(update.mul_(-lr))

    gathered = torch.empty_like(flat_params)
    dist.all_gather_into_tensor(gathered, new_shard.contiguous())
    return (*_split_like(gathered, templates), m, v)
