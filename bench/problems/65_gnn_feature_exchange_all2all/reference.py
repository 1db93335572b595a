"""Feature exchange of distributed GNN sampling: every rank gathers rows of its local feature table by
seed_inverse_ids and sends them to the ranks that need them, receiving rows from every rank in turn.

Rank r's gathered rows, local_features[seed_inverse_ids], are cut into W consecutive chunks of
counts_received[0], ..., counts_received[W-1] rows; its output, of sum(counts_sent) rows, is cut into W chunks of
counts_sent[0], ... rows. Both lists are rotated by the rank: chunk k of rank r's gathered rows goes to rank
(r + k) mod W, where it fills output chunk (W - k) mod W. (So chunk 0 stays home, and the sizes must agree:
counts_received[k] of rank r equals counts_sent[(W - k) mod W] of rank (r + k) mod W.)
Returns the output, (sum(counts_sent), hidden), of the features' dtype."""

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
def solution(local_features: torch.Tensor, seed_inverse_ids: torch.Tensor, counts_sent: List[int],
             counts_received: List[int], group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    gathered = local_features[seed_inverse_ids]
    return rotated_exchange(gathered, counts_received, counts_sent, group)
