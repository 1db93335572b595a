"""All-to-all of a KeyedJaggedTensor (TorchRec's sparse-feature exchange for model-parallel embeddings), in plain
torch.

Every rank holds the same F = sum(key_splits) sparse features for its own batch of B = batch_size samples:
lengths (F*B,) int64, feature-major (entry f*B + b is how many ids sample b has for feature f), and values, the
ids themselves in the same order. Features are owned by ranks in consecutive blocks: rank d owns key_splits[d]
of them. Every rank sends each owner the lengths and ids of that owner's features and receives, from every rank,
the lengths and ids of its own features for that rank's batch.

Returns a dict of int64 tensors on the inputs' device:
  "lengths": (key_splits[r] * sum of batch sizes,): for each owned feature, rank 0's batch, then rank 1's ...;
  "values": the ids in the same order;
  "stride": 0-d, the total batch size over the ranks;
  "stride_per_rank": (W,), each rank's batch size.
With weights given (float, like values) the dict also holds "weights", permuted as values. stride_per_key (a
batch size per feature) and stagger (a rank interleave) follow TorchRec's KJTAllToAll; the default run uses
neither."""

from typing import Dict, List, Optional

import torch
import torch.distributed as dist


def _segment_sums(values: List[int], splits: List[int]) -> List[int]:
    out, start = [], 0
    for n in splits:
        out.append(sum(values[start:start + n]))
        start += n
    return out


def _reorder_segments(data: torch.Tensor, segment_lengths: List[int], order: List[int]) -> torch.Tensor:
    """The segments of `data` (consecutive, of the given lengths) concatenated in `order`."""
    pieces = torch.split(data, segment_lengths)
    return torch.cat([pieces[i] for i in order]) if order else data[:0]


def _feature_major_order(local: int, world: int, stagger: int) -> List[int]:
    """Received segments come rank-major (rank s's `local` features, then rank s+1's); the result is
    feature-major: for each local feature, its segment from every rank (in stagger's rank order)."""
    ranks = [x + world // stagger * y for x in range(world // stagger) for y in range(stagger)]
    return [s * local + f for f in range(local) for s in ranks]


def _exchange(tensor: torch.Tensor, send: List[int], receive: List[int], group) -> torch.Tensor:
    out = tensor.new_empty((sum(receive),))
    dist.all_to_all_single(out, tensor.contiguous(), output_split_sizes=receive, input_split_sizes=send, group=group)
    return out


@torch.no_grad()
def solution(lengths: torch.Tensor, values: torch.Tensor, key_splits: List[int], batch_size: int,
             pg: Optional[dist.ProcessGroup] = None, weights: Optional[torch.Tensor] = None,
             stride_per_key: Optional[List[int]] = None, stagger: int = 1) -> Dict[str, torch.Tensor]:
    pg = pg or dist.group.WORLD
    world = dist.get_world_size(pg)
    rank = dist.get_rank(pg)
    device = lengths.device
    features = sum(key_splits)
    variable = stride_per_key is not None
    strides = list(stride_per_key) if variable else [batch_size] * features

    # How many lengths and ids go to each owner.
    starts = [0]
    for n in strides:
        starts.append(starts[-1] + n)
    lengths_cpu = lengths.to("cpu")
    ids_per_feature = [int(lengths_cpu[starts[f]:starts[f + 1]].sum()) for f in range(features)]
    length_sends = _segment_sums(strides, key_splits)
    value_sends = _segment_sums(ids_per_feature, key_splits)

    # One all-to-all of the split sizes (and, per rank, the batch sizes or the per-feature strides).
    columns = [length_sends, value_sends] + ([key_splits] if variable else [])
    if weights is not None:
        columns.append(value_sends)
    if not variable:
        columns.append([batch_size] * world)
    meta = torch.tensor(columns, dtype=torch.int64, device=device).T.contiguous()  # (W, columns)
    meta_in = torch.empty_like(meta)
    dist.all_to_all_single(meta_in, meta, group=pg)
    received = meta_in.T.tolist()  # per column: what each rank sends here

    length_receives, value_receives = received[0], received[1]
    recv_lengths = _exchange(lengths, length_sends, length_receives, pg)
    recv_values = _exchange(values, value_sends, value_receives, pg)
    recv_strides = _exchange(torch.tensor(strides, dtype=torch.int64, device=device), key_splits, received[2], pg) \
        if variable else None
    recv_weights = _exchange(weights, value_sends, value_receives, pg) if weights is not None else None

    local = key_splits[rank]
    order = _feature_major_order(local, world, stagger) if local else []
    if variable:
        segment_rows = recv_strides.to("cpu").tolist()  # rank-major: (rank, local feature)
        row_lengths = recv_lengths.to("cpu")
        bounds = [0]
        for n in segment_rows:
            bounds.append(bounds[-1] + n)
        segment_ids = [int(row_lengths[bounds[i]:bounds[i + 1]].sum()) for i in range(len(segment_rows))]
        if order:
            recv_lengths = _reorder_segments(recv_lengths, segment_rows, order)
            recv_values = _reorder_segments(recv_values, segment_ids, order)
            if recv_weights is not None:
                recv_weights = _reorder_segments(recv_weights, segment_ids, order)
        per_key_per_rank = recv_strides.view(world, local).T
        if stagger > 1:
            per_key_per_rank = per_key_per_rank[:, torch.arange(world, device=device).view(stagger, -1).T.reshape(-1)]
        result = {"lengths": recv_lengths, "values": recv_values, "stride_per_key_per_rank": per_key_per_rank}
    else:
        batches = received[-1]
        if order:
            # Segment (s, f) holds rank s's batch of local feature f: batches[s] lengths.
            segment_rows = [batches[s] for s in range(world) for _ in range(local)]
            row_lengths = recv_lengths.to("cpu")
            bounds = [0]
            for n in segment_rows:
                bounds.append(bounds[-1] + n)
            segment_ids = [int(row_lengths[bounds[i]:bounds[i + 1]].sum()) for i in range(len(segment_rows))]
            recv_lengths = _reorder_segments(recv_lengths, segment_rows, order)
            recv_values = _reorder_segments(recv_values, segment_ids, order)
            if recv_weights is not None:
                recv_weights = _reorder_segments(recv_weights, segment_ids, order)
        result = {"lengths": recv_lengths, "values": recv_values,
                  "stride": torch.tensor(sum(batches), device=device),
                  "stride_per_rank": torch.tensor(batches, device=device)}
    if recv_weights is not None:
        result["weights"] = recv_weights
    return result
