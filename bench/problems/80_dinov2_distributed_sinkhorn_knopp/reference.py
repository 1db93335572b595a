"""DINOv2's Sinkhorn-Knopp centering of teacher scores across ranks: rank r holds its own samples' teacher
scores (B_r, P) over P prototypes. The scores become exp(score / temperature) in float32; the matrix of all
ranks' samples is then balanced for n_iterations rounds, each making every prototype's total mass over all
ranks' samples equal (1 / P) and then every sample's mass equal. Rank r returns its own samples' rows of the
balanced matrix, float32 (B_r, P), each row summing to 1."""

from typing import Optional

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(teacher_output: torch.Tensor, teacher_temp: float, n_masked_patches_tensor: torch.Tensor,
             n_iterations: int = 3, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    # Prototypes on rows, samples on columns: the prototype sums span every rank's columns.
    mass = torch.exp(teacher_output.float() / teacher_temp).t()
    samples = n_masked_patches_tensor.to(device=mass.device, dtype=mass.dtype).clone()
    dist.all_reduce(samples, group=group)
    prototypes = mass.shape[0]

    whole = mass.sum()
    dist.all_reduce(whole, group=group)
    mass /= whole
    for _ in range(n_iterations):
        per_prototype = mass.sum(dim=1, keepdim=True)
        dist.all_reduce(per_prototype, group=group)
        mass /= per_prototype
        mass /= prototypes
        # Each sample's column is local: no communication for it.
        mass /= mass.sum(dim=0, keepdim=True)
        mass /= samples
    mass *= samples
    return mass.t().contiguous()
