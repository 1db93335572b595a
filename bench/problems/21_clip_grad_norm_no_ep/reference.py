"""Gradient-norm clipping over a data-parallel group (FSDP2's clip_grad_norm_ without expert parallelism).

The total norm is the norm_type-norm of all gradients of all ranks of fsdp_group: each rank sums
||g||_p ** p over its gradients (in float32), the sums are all-reduced over fsdp_group, and total_norm =
sum ** (1 / p). When total_norm > max_norm every gradient is scaled in place by max_norm / total_norm. Returns
total_norm, a float32 0-d tensor; the scaled gradients are part of the answer. With fsdp_group None nothing is
reduced (the norm is then this rank's own)."""

from typing import List, Optional

import torch
import torch.distributed as dist


def solution(grad_tensors: List[torch.Tensor], max_norm: float, norm_type: float = 2.0,
             fsdp_group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    p = float(norm_type)
    present = [g for g in grad_tensors if g is not None]
    total = torch.zeros((), dtype=torch.float32, device=present[0].device if present else None)
    for g in present:
        total = total + torch.norm(g.detach().to(torch.float32), p=p) ** p
    if fsdp_group is not None:
        dist.all_reduce(total, op=dist.ReduceOp.SUM, group=fsdp_group)
    total_norm = total ** (1.0 / p)
    if total_norm > max_norm:
        coef = max_norm / total_norm
        for g in present:
            g.mul_(coef.to(g.device))
    return total_norm
