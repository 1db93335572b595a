"""Sparse feature fetch and projection for GNN training with a node-embedding table sharded by rows: rank r
holds rows [r·S, (r+1)·S) of the (num_total_nodes, D) table, S = ceil(num_total_nodes / W) (the last rank
owns any id past the end), its own query ids (Q,) int64 into the whole table, and its own projection (D, D').
Each id is sent to its owner, the owner returns the row, and rank r returns its queries' rows, in the ids'
order, times its projection: (Q, D') in the table's dtype."""

from typing import Optional

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(local_embedding_shard: torch.Tensor, input_node_ids: torch.Tensor, proj_matrix: torch.Tensor,
             num_total_nodes: int, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    rows = (num_total_nodes + world - 1) // world
    owner = (input_node_ids // rows).clamp(max=world - 1)
    order = torch.argsort(owner, stable=True)  # the ids grouped by owner, each group in query order
    asked = torch.bincount(owner, minlength=world)
    asked_of_me = torch.empty_like(asked)
    dist.all_to_all_single(asked_of_me, asked, group=group)
    send, receive = asked.tolist(), asked_of_me.tolist()

    wanted = input_node_ids.new_empty(sum(receive))
    dist.all_to_all_single(wanted, input_node_ids[order], output_split_sizes=receive, input_split_sizes=send,
                           group=group)
    found = local_embedding_shard[wanted - rank * rows]
    fetched = found.new_empty((input_node_ids.shape[0], local_embedding_shard.shape[1]))
    dist.all_to_all_single(fetched, found, output_split_sizes=send, input_split_sizes=receive, group=group)
    rows_in_query_order = torch.empty_like(fetched)
    rows_in_query_order[order] = fetched
    return rows_in_query_order @ proj_matrix
