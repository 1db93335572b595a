"""One step of DeePMD's Kalman-filter optimizer (RLEKF) with its weight blocks spread over data-parallel ranks.

Rank r holds n blocks: per block i a gradient H[i] (L_i, 1), weights weights[i] (L_i, 1) and an error covariance
P[i] (L_i, L_i); the prediction error `error` (0-d) and the forgetting factor kalman_lambda. With
lam = kalman_lambda:
    A = 1 / sum over all ranks and blocks of (lam + H[i]^T P[i] H[i])      (one all-reduce)
    K[i] = P[i] H[i];  weights[i] <- weights[i] + A * error * K[i];  P[i] <- (P[i] - A * K[i] K[i]^T) / lam
The list slots of `weights` and `P` are replaced by the new tensors (part of the answer). Returns (the updated
weight blocks of every rank in rank order, each (L_i, 1); this rank's list P; the next forgetting factor
kalman_nue * lam + 1 - kalman_nue as a 0-d tensor), all in the weights' dtype (float64)."""

from typing import List, Tuple

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(H: List[torch.Tensor], error: torch.Tensor, weights: List[torch.Tensor], P: List[torch.Tensor],
             kalman_lambda: float,
             kalman_nue: float = 0.9987) -> Tuple[List[torch.Tensor], List[torch.Tensor], torch.Tensor]:
    dtype, device = weights[0].dtype, weights[0].device
    lam = torch.as_tensor(kalman_lambda, dtype=dtype, device=device)
    err = error.to(dtype=dtype, device=device)

    denominator = 0
    for h, p in zip(H, P):
        denominator = denominator + (lam + h.T @ p @ h)
    if dist.is_initialized():
        dist.all_reduce(denominator, op=dist.ReduceOp.SUM)
    A = 1 / denominator

    for i, (h, p) in enumerate(zip(H, P)):
        K = p @ h
        weights[i] = weights[i] + A * err * K
        P[i] = (1 / lam) * (p - A * (K @ K.T))

    every_weight = list(weights)
    if dist.is_initialized():
        # Ranks may hold blocks of other lengths: share the lengths first, then gather the flat weights.
        lengths = [None] * dist.get_world_size()
        dist.all_gather_object(lengths, [w.shape[0] for w in weights])
        flat = torch.cat([w.reshape(-1) for w in weights]).to(torch.float64)
        gathered = [torch.empty(sum(n), dtype=torch.float64, device=device) for n in lengths]
        dist.all_gather(gathered, flat)
        every_weight = [piece.reshape(-1, 1).to(dtype) for n, g in zip(lengths, gathered) for piece in g.split(n)]

    nue = torch.as_tensor(kalman_nue, dtype=dtype, device=device)
    return every_weight, P, nue * lam + 1 - nue
