"""All-gather + GEMM: rank r holds A_r (M, K/W), its slice of the inner dimension, and its own B_r (K, N).
Every rank returns C_r = A @ B_r, shape (M, N) in the input dtype, where A (M, K) is the concatenation
[A_0 | A_1 | ... | A_{W-1}] along the inner dimension, gathered from all ranks."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(A_local: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    slices = [torch.empty_like(A_local) for _ in range(world)]
    dist.all_gather(slices, A_local)
    # Rank s's slice holds columns s*K/W .. (s+1)*K/W of A.
    return torch.matmul(torch.cat(slices, dim=1), B)
