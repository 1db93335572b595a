"""Backward of an expert-parallel grouped-GEMM LoRA layer, its communication step: every rank holds its partial
gradients of the three LoRA factors (fc1's two A factors, (R, N) each, and fc2's B factor, (N, R)), and every
rank needs their sum over the ranks of the group. Returns the three summed gradients, a tuple of bf16 tensors of
the inputs' shapes, the same on every rank. The inputs are left as they are (the sums go to fresh tensors)."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist


def solution(grad_fc1_1_lora_A: torch.Tensor, grad_fc1_2_lora_A: torch.Tensor, grad_fc2_lora_B: torch.Tensor,
             group: Optional[dist.ProcessGroup] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    group = group or dist.group.WORLD
    summed = []
    for grad in (grad_fc1_1_lora_A, grad_fc1_2_lora_A, grad_fc2_lora_B):
        total = grad.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM, group=group)
        summed.append(total)
    return tuple(summed)
