"""Gradient-norm clipping with expert parallelism (FSDP2 with an EP x EP-FSDP mesh).

Rank r holds gradients of dense (non-expert) parameters, sharded over fsdp_group, and gradients of its experts'
parameters, sharded over ep_fsdp_group and split over ep_group. First, when ep_size > 1, the expert gradients are
scaled in place by 1 / ep_size. The total norm_type-norm p then counts every gradient of every rank once: the
dense sum of ||g||_p ** p (float32) is all-reduced over fsdp_group, the expert sum over ep_fsdp_group and then
ep_group, and total_norm = (dense + expert) ** (1 / p). When total_norm > max_norm, every gradient of both lists is
scaled in place by max_norm / total_norm. Returns total_norm, a float32 0-d tensor; the gradients after the call
are part of the answer. A group None reduces nothing."""

from typing import List, Optional

import torch
import torch.distributed as dist


def _sum_of_powers(grads: List[torch.Tensor], p: float, groups) -> torch.Tensor:
    """sum of ||g||_p ** p over the gradients (float32), all-reduced over each group in turn."""
    present = [g for g in grads if g is not None]
    total = torch.zeros((), dtype=torch.float32, device=present[0].device if present else None)
    for g in present:
        total = total + torch.norm(g.detach().to(torch.float32), p=p) ** p
    for group in groups:
        if group is not None:
            dist.all_reduce(total, op=dist.ReduceOp.SUM, group=group)
    return total


def solution(non_ep_grad_tensors: List[torch.Tensor], ep_grad_tensors: List[torch.Tensor], max_norm: float,
             norm_type: float = 2.0, ep_size: int = 1, fsdp_group: Optional[dist.ProcessGroup] = None,
             ep_fsdp_group: Optional[dist.ProcessGroup] = None,
             ep_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    p = float(norm_type)
    if ep_size > 1:
        for g in ep_grad_tensors:
            if g is not None:
                g.detach().mul_(1.0 / float(ep_size))
    dense = _sum_of_powers(non_ep_grad_tensors, p, [fsdp_group])
    expert = _sum_of_powers(ep_grad_tensors, p, [ep_fsdp_group, ep_group])
    total_norm = (dense + expert) ** (1.0 / p)
    if total_norm > max_norm:
        coef = max_norm / total_norm
        for g in list(non_ep_grad_tensors) + list(ep_grad_tensors):
            if g is not None:
                g.mul_(coef.to(g.device))
    return total_norm
