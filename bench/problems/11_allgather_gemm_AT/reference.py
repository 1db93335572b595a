"""All-gather + GEMM, the gathered operand travelling transposed: rank r holds A_r (M, K/W), its slice of the
inner dimension, and its own B_r (K, N). Every rank returns C_r = A @ B_r, shape (M, N) in the input dtype,
where A (M, K) is the concatenation [A_0 | A_1 | ... | A_{W-1}] along the inner dimension. The slices are
gathered as their (K/W, M) transposes, stacked on rows into A^T (K, M), and C_r is computed as (B_r^T A^T)^T."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(A_local: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    rows, inner = A_local.shape
    # Rank s's transposed slice lands in rows s*K/W .. (s+1)*K/W of A^T.
    slice_t = A_local.t().contiguous()
    a_t = slice_t.new_empty((world * inner, rows))
    dist.all_gather_into_tensor(a_t, slice_t)
    return torch.matmul(B.t(), a_t).t()
