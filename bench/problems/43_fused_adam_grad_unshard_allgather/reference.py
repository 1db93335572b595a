"""One Adam step on this rank's shard of a flat parameter, then the updated shards of all ranks gathered.

Rank r holds the (P,) shards of the gradient, the master weights and Adam's first and second moments. With bias
corrections c1 = 1 - beta1 ** step and c2 = 1 - beta2 ** step (step >= 1):
    m = beta1 * exp_avg + (1 - beta1) * g,   v = beta2 * exp_avg_sq + (1 - beta2) * g * g,
    w = master - lr * (m / c1) / (sqrt(v / c2) + eps),
each step in the shards' dtype. The inputs are not changed. Returns every rank's updated w concatenated in rank
order, (W * P,) in the shards' dtype, the same on every rank."""

import math

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(grad_shard: torch.Tensor, master_shard: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
             lr: float, beta1: float, beta2: float, eps: float, step: int) -> torch.Tensor:
    if step < 1:
        raise ValueError(f"step must be >= 1 (Adam's bias correction), got {step}")
    c1 = 1.0 - math.pow(beta1, step)
    c2 = 1.0 - math.pow(beta2, step)
    g = grad_shard
    # Fused multiply-adds (one rounding each), on copies: the inputs stay as they are.
    m = exp_avg.mul(beta1).add_(g, alpha=1.0 - beta1)
    v = exp_avg_sq.mul(beta2).addcmul_(g, g, value=1.0 - beta2)
    w = master_shard.add((m / c1).div_((v / c2).sqrt_().add_(eps)).mul_(-lr))

    gathered = torch.empty(dist.get_world_size() * w.numel(), dtype=w.dtype, device=w.device)
    dist.all_gather_into_tensor(gathered, w.contiguous())
    return gathered
