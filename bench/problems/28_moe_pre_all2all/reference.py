"""Token dispatch of an expert-parallel MoE layer, before the experts run. E = num_experts experts are split
evenly over the W ranks of the group (E/W local experts each, rank p hosting experts p*E/W ... (p+1)*E/W - 1).

hidden_states (T, H) are this rank's tokens; expert_mask (E, K, T) float32 is 1 where token t chose expert e as
its k-th choice. routing_map = expert_mask summed over the choices, (E, T). The tokens are permuted expert by
expert (for each expert, the tokens routed to it in token order: permutation_mapping, int64, the token index of
each permuted row), then exchanged: the first input_splits[0] permuted rows go to rank 0, the next
input_splits[1] to rank 1, and so on; rank s's rows arrive in rank order, output_splits[s] of them. The received
rows are cut into W*E/W chunks of num_global_tokens_per_local_expert (W, E/W), row-major (sender, local expert),
and regrouped local-expert-major: all senders' chunks of local expert 0, then of local expert 1, ...

Returns (the regrouped rows (sum(output_splits), H) of hidden_states' dtype, routing_map float32 (E, T),
permutation_mapping int64 (number of routed pairs,), torch.Size of hidden_states as (T, H))."""

from typing import List, Optional, Tuple

import torch
import torch.distributed as dist


def solution(hidden_states: torch.Tensor, expert_mask: torch.Tensor, num_experts: int, input_splits: List[int],
             output_splits: List[int], num_global_tokens_per_local_expert: torch.Tensor,
             group: Optional[dist.ProcessGroup] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Size]:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    tokens = hidden_states.reshape(-1, hidden_states.shape[-1])
    routing_map = expert_mask.sum(dim=1)
    # Expert-major order of the routed (expert, token) pairs: nonzero walks the (E, T) map row by row.
    mapping = torch.nonzero(routing_map.bool(), as_tuple=True)[1]
    if mapping.numel() != sum(input_splits):
        raise RuntimeError(f"input_splits add up to {sum(input_splits)} rows, but {mapping.numel()} were routed")
    permuted = tokens.index_select(0, mapping)
    if world > 1:
        received = permuted.new_empty((sum(output_splits), tokens.shape[1]))
        dist.all_to_all_single(received, permuted, output_split_sizes=list(output_splits),
                               input_split_sizes=list(input_splits), group=group)
    else:
        received = permuted
    local = num_experts // world
    chunks = torch.split(received, num_global_tokens_per_local_expert.reshape(-1).tolist())
    regrouped = torch.cat([chunks[sender * local + expert] for expert in range(local) for sender in range(world)])
    return regrouped, routing_map, mapping, tokens.shape
