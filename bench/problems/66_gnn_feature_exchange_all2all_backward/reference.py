"""Backward of 65's feature exchange: the gradients of the exchanged rows travel back to the ranks that
gathered them and are summed into the rows of the seed table they were gathered from.

Rank r's grad_output, of sum(counts_sent) rows, is cut into W chunks of counts_sent[0], ... rows; chunk k goes to
rank (r + k) mod W, where it fills chunk (W - k) mod W of the received rows (cut by counts_received, of
sum(counts_received) rows). Received row i is then added into row seed_inverse_ids[i] of a zero
(seed_size, hidden) table. Returns that table, float32 like grad_output."""

from typing import List, Optional

import torch
import torch.distributed as dist


def rotated_exchange(rows: torch.Tensor, send_counts: List[int], receive_counts: List[int], group) -> torch.Tensor:
    """Chunk k of `rows` (cut by send_counts) goes to rank (r + k) mod W, which puts it in its chunk
    (W - k) mod W (cut by its receive_counts); returns the received rows in chunk order."""
    world = dist.get_world_size(group)
    me = dist.get_rank(group)
    # Peer p gets this rank's chunk (p - me) mod W, and its own chunk (me - p) mod W fills this rank's chunk
    # (p - me) mod W: the same rotation on both sides, chunks put in peer order for all_to_all_single.
    order = [(p - me) % world for p in range(world)]
    send_chunks = torch.split(rows, send_counts)
    send = torch.cat([send_chunks[k] for k in order])
    received = rows.new_empty((sum(receive_counts),) + tuple(rows.shape[1:]))
    dist.all_to_all_single(received, send, output_split_sizes=[receive_counts[k] for k in order],
                           input_split_sizes=[send_counts[k] for k in order], group=group)
    # Received in peer order: peer (me + j) mod W filled chunk j.
    pieces = torch.split(received, [receive_counts[k] for k in order])
    return torch.cat([pieces[(me + j) % world] for j in range(world)])


@torch.no_grad()
def solution(grad_output: torch.Tensor, seed_inverse_ids: torch.Tensor, seed_size: int, counts_sent: List[int],
             counts_received: List[int], group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    received = rotated_exchange(grad_output, counts_sent, counts_received, group)
    out = received.new_zeros((seed_size,) + tuple(received.shape[1:]))
    return out.index_add_(0, seed_inverse_ids, received)
