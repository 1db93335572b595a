"""Variable-split all-to-all (the token exchange of expert-parallel MoE): rank r sends the first
input_split_sizes[0] rows of local_tensor to rank 0, the next input_split_sizes[1] rows to rank 1, and so on;
it receives output_split_sizes[s] rows from rank s, placed in rank order, and returns them as one tensor of
sum(output_split_sizes) rows."""

import torch
import torch.distributed as dist


def solution(local_tensor: torch.Tensor, input_split_sizes: list, output_split_sizes: list, group=None) -> torch.Tensor:
    out = torch.empty((sum(output_split_sizes), *local_tensor.shape[1:]),
                      dtype=local_tensor.dtype, device=local_tensor.device)
    dist.all_to_all_single(out, local_tensor.contiguous(), output_split_sizes=output_split_sizes,
                           input_split_sizes=input_split_sizes, group=group)
    return out
