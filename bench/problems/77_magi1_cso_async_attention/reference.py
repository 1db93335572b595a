"""MAGI-1's context-shuffle-overlap attention: a pipelined exchange of query chunks and attention outputs
between ranks, overlapped with the attention of each key range.

Rank r holds query (R * P, Hq, D) and key_value (R * P, Hkv, 2D) (keys, then values, along the last dim) for
its P tokens of each of R = cp_shuffle_num ranges. Range i's tokens, over all ranks, are rank 0's P tokens of
the range, then rank 1's, and so on (W * P in all); its keys are the first clip_token_nums of them (None: all),
and k_ranges (R, 2) gives where range i's keys lie in the ranges' clipped keys laid end to end. The KV heads are
split over the ranks (repeated first when fewer than W and W is a multiple of their count), as are the query
heads: an all-to-all gives each rank its KV heads for every token. Then for each range in turn an all-to-all
brings the rank its query heads for all W * P tokens of the range, it attends them (softmax(q k^T / sqrt(D)) v,
no mask, query head g on KV head g / (Hq / Hkv)) to the range's keys, and an all-to-all returns each token's
output to its rank. The exchanges are asynchronous and pipelined: the queries of range i+1 travel with the output
of range i-1 (concatenated along the last dim) while range i is attended. Returns (R * P, Hq, D) in the query's
dtype: rank r's tokens, every head. group None means the default group."""

from typing import List, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _kv_heads_to_ranks(key_value: torch.Tensor, world: int, group) -> torch.Tensor:
    """(N, Hkv, 2D): this rank's tokens, all KV heads -> (W*N, Hkv/W, 2D): every rank's tokens (rank by rank),
    this rank's KV heads."""
    tokens, heads, width = key_value.shape
    if heads < world and world % heads == 0:
        key_value = key_value.repeat_interleave(world // heads, dim=1)
        heads = world
    if heads % world:
        raise ValueError(f"{heads} KV heads do not split over {world} ranks")
    send = key_value.reshape(tokens, world, heads // world, width).transpose(0, 1).reshape(-1, heads // world, width)
    got = torch.empty_like(send)
    dist.all_to_all_single(got, send.contiguous(), output_split_sizes=[tokens] * world,
                           input_split_sizes=[tokens] * world, group=group)
    return got


def _query_chunks(query: torch.Tensor, world: int, ranges: int) -> List[torch.Tensor]:
    """Per range, (W*P, Hq/W, D): rank j's query heads of this rank's P tokens of the range, j = 0..W-1."""
    tokens, heads, dim = query.shape
    if heads % world:
        raise ValueError(f"{heads} query heads do not split over {world} ranks")
    per = tokens // ranges
    chunks = query.reshape(ranges, per, world, heads // world, dim).transpose(1, 2).contiguous()
    return list(chunks.reshape(ranges, world * per, heads // world, dim).unbind(0))


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q (n, h, D) against k, v (m, hk, D), the KV heads shared by groups of h / hk query heads: (n, h, D)."""
    q, k, v = (t.unsqueeze(0).transpose(1, 2) for t in (q, k, v))
    if k.shape[1] < q.shape[1]:
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    return F.scaled_dot_product_attention(q, k, v).squeeze(0).transpose(0, 1).contiguous()


@torch.no_grad()
def solution(query: torch.Tensor, key_value: torch.Tensor, k_ranges: torch.Tensor, cp_shuffle_num: int,
             clip_token_nums: Optional[int] = None, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world, ranges = dist.get_world_size(group), cp_shuffle_num
    tokens, _, dim = query.shape
    if tokens % ranges:
        raise ValueError(f"{tokens} query tokens do not split into cp_shuffle_num={ranges} ranges")
    per = tokens // ranges
    clip = int(clip_token_nums or world * per)

    kv = _kv_heads_to_ranks(key_value, world, group)
    kv = kv.reshape(world, ranges, per, *kv.shape[1:]).transpose(0, 1).reshape(ranges, world * per, *kv.shape[1:])
    kv = kv[:, :clip].reshape(ranges * clip, *kv.shape[2:])
    keys, values = kv[..., :dim], kv[..., dim:]
    chunks = _query_chunks(query, world, ranges)
    splits = [per] * world

    def start_exchange(t: torch.Tensor):
        got = torch.empty_like(t)
        work = dist.all_to_all_single(got, t.contiguous(), output_split_sizes=splits, input_split_sizes=splits,
                                      group=group, async_op=True)
        return got, work

    returned = []            # each range's output, back on this rank: (W*P, Hq/W, D), rank j's heads in piece j
    q_local, work = start_exchange(chunks[0])
    work.wait()
    in_flight = None         # the exchange launched last: queries of the next range and/or an earlier output
    previous = None          # the output of the range attended last, not sent yet
    for i in range(ranges):
        if i > 0:
            carried, work = in_flight
            work.wait()
            if carried.shape[-1] == dim:
                q_local = carried
            else:
                q_local, done = torch.chunk(carried, 2, dim=-1)
                returned.append(done)
        if i + 1 < ranges:
            payload = chunks[i + 1] if previous is None else torch.cat([chunks[i + 1], previous], dim=-1)
            in_flight = start_exchange(payload)
        elif previous is not None:
            in_flight = start_exchange(previous)
        else:
            in_flight = None
        start, end = int(k_ranges[i, 0]), int(k_ranges[i, 1])
        previous = _attention(q_local, keys[start:end], values[start:end])
    if in_flight is not None:
        carried, work = in_flight
        work.wait()
        returned.append(carried)
    last, work = start_exchange(previous)
    work.wait()
    returned.append(last)

    out = torch.stack(returned).reshape(ranges, world, per, -1, dim).transpose(1, 2)
    return out.reshape(ranges * per, -1, dim)
