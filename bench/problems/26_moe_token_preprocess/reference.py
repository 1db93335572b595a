"""Token bookkeeping before an expert-parallel MoE dispatch: E experts split evenly over the W ranks of the group
(E/W local experts each, rank p hosting experts p*E/W .. (p+1)*E/W - 1). expert_mask (E, K, T) float32 is 1
where token t chose expert e as its k-th choice, 0 elsewhere.

Every rank counts its tokens per expert and shares the counts. Returns four CPU tensors:
  input_splits   int64 (W,): how many of this rank's (token, choice) pairs go to each rank's experts;
  output_splits  int64 (W,): how many pairs each rank sends to this rank's experts;
  per_local_expert  float32 (W, E/W): pairs from rank s for this rank's local expert j;
  sum_per_local_expert  float32 (E/W,): the pairs each local expert receives from all ranks."""

from typing import Optional, Tuple

import torch
import torch.distributed as dist


def solution(expert_mask: torch.Tensor, num_experts: int, group: Optional[dist.ProcessGroup] = None
             ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    local = num_experts // world
    per_expert = expert_mask.sum(dim=(1, 2))  # (E,) float32
    everyone = per_expert.new_empty((world * num_experts,))
    dist.all_gather_into_tensor(everyone, per_expert.contiguous(), group=group)
    mine = everyone.view(world, num_experts)[:, rank * local:(rank + 1) * local]
    input_splits = per_expert.view(world, local).sum(dim=1).to("cpu", torch.int64)
    output_splits = mine.sum(dim=1).to("cpu", torch.int64)
    return input_splits, output_splits, mine.to("cpu"), mine.sum(dim=0).to("cpu")
