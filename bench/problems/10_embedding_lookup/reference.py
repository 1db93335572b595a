"""Lookup in a row-sharded embedding table: rank r holds rows r*S .. r*S + S - 1 of a (W*S, D) table as
local_shard (S, D), and S global row ids, indices (S,) int64 in [0, W*S). Every rank sends each id to the rank
owning its row (id // S), the owners look the rows up, and the rows travel back.

Returns (len(indices), D) of the table's dtype: the looked-up rows with the ids grouped by owner, rank 0's first,
each owner's in the order they appear in indices (a stable sort of the ids by owner). An id outside the table is
an error, not clamped."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(indices: torch.Tensor, local_shard: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    rank = dist.get_rank()
    rows = local_shard.shape[0]
    indices = indices.to(local_shard.device)
    owner = indices // rows
    order = torch.argsort(owner, stable=True)
    send_ids = indices[order]
    send_counts = torch.bincount(owner, minlength=world)
    if send_counts.numel() > world:
        raise IndexError(f"embedding ids must lie in [0, {world * rows}); got {int(indices.max())}")
    receive_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(receive_counts, send_counts)
    sends, receives = send_counts.tolist(), receive_counts.tolist()
    wanted = torch.empty((sum(receives),), dtype=indices.dtype, device=indices.device)
    dist.all_to_all_single(wanted, send_ids, output_split_sizes=receives, input_split_sizes=sends)
    local = wanted - rank * rows
    if local.numel() and (int(local.min()) < 0 or int(local.max()) >= rows):
        raise IndexError(f"rank {rank} was asked for rows outside its shard [{rank * rows}, {(rank + 1) * rows})")
    found = local_shard[local]
    out = local_shard.new_empty((indices.shape[0], local_shard.shape[1]))
    dist.all_to_all_single(out, found, output_split_sizes=sends, input_split_sizes=receives)
    return out
