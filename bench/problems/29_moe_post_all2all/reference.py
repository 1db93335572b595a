"""Token combine of an expert-parallel MoE layer, after the experts ran: the inverse of 28's dispatch. E =
num_experts experts are split evenly over the W ranks of the group (E/W local experts each).

expert_outputs holds the rows this rank's experts produced, local-expert-major: cut into chunks by
num_global_tokens_per_local_expert (W, E/W) read column by column (local expert 0's chunks from senders 0 ..
W-1, then local expert 1's ...). The chunks are put back sender-major (sender 0's chunks of every local expert,
then sender 1's ...) and sent back: the first output_splits[0] rows to rank 0, the next output_splits[1] to rank 1
and so on; rank s's rows arrive in rank order, input_splits[s] of them, one per routed (expert, token) pair in
expert-major order. Row i of those belongs to token permutation_mapping[i] and expert e (the i-th True of
routing_map (E, T) read row by row); it is scaled by the token's routing weight for e (routing_weights (T, K)
of the experts selected_experts (T, K) int64) and summed into that token's row of a zero tensor of shape
org_hidden_states_shape. Returns that tensor, (T, H) of expert_outputs' dtype."""

from typing import List, Optional

import torch
import torch.distributed as dist


def solution(expert_outputs: torch.Tensor, routing_weights: torch.Tensor, selected_experts: torch.Tensor,
             num_experts: int, input_splits: List[int], output_splits: List[int],
             num_global_tokens_per_local_expert: torch.Tensor, routing_map: torch.Tensor,
             local_input_permutation_mapping: torch.Tensor, org_hidden_states_shape: List[int],
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    local = num_experts // world
    # Chunks are stored (local expert, sender)-major; put them back (sender, local expert)-major.
    chunks = torch.split(expert_outputs, num_global_tokens_per_local_expert.T.reshape(-1).tolist())
    by_sender = torch.cat([chunks[expert * world + sender] for sender in range(world) for expert in range(local)])
    if world > 1:
        back = by_sender.new_empty((sum(input_splits), by_sender.shape[1]))
        dist.all_to_all_single(back, by_sender.contiguous(), output_split_sizes=list(input_splits),
                               input_split_sizes=list(output_splits), group=group)
    else:
        back = by_sender
    # Every token's weight per expert, then the weight of each routed pair in expert-major order.
    weight_of = routing_weights.new_zeros((routing_weights.shape[0], num_experts))
    weight_of.scatter_add_(1, selected_experts, routing_weights)
    pair_weights = weight_of.T[routing_map.bool()]
    out = back.new_zeros(tuple(org_hidden_states_shape))
    index = local_input_permutation_mapping.view(-1, 1).expand(-1, back.shape[1])
    return out.scatter_add_(0, index, back * pair_weights.unsqueeze(1))
