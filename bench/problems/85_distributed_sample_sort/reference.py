"""Distributed sample sort with exact rebalancing: rank r holds n_r values (1-D; some ranks may hold none).
The ranks sort their values, agree on splitters from regular samples, exchange the buckets (variable
all-to-all), merge what they receive, then move elements so that rank r ends with exactly its share of the
sorted sequence of all T = Σ n_r values: positions [r·(T // W) + min(r, T % W), ...) of length
T // W + (1 if r < T % W else 0). Rank r returns that slice of the globally sorted values, 1-D, in the input's
dtype."""

from typing import List, Optional, Tuple

import torch
import torch.distributed as dist


def _sizes(n: int, device, group) -> List[int]:
    """Every rank's element count."""
    mine = torch.tensor([n], dtype=torch.long, device=device)
    every = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    dist.all_gather(every, mine, group=group)
    return [int(t.item()) for t in every]


def _exchange(chunks: List[torch.Tensor], group) -> List[torch.Tensor]:
    """Chunk d goes to rank d; returns what each rank sent here, in rank order."""
    like = chunks[0]
    send_counts = torch.tensor([c.numel() for c in chunks], dtype=torch.long, device=like.device)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts, group=group)
    sent, received = send_counts.tolist(), recv_counts.tolist()
    out = like.new_empty(sum(received))
    dist.all_to_all_single(out, torch.cat(chunks) if sum(sent) else like.new_empty(0),
                           output_split_sizes=received, input_split_sizes=sent, group=group)
    return list(out.split(received))


def _samples(ordered: torch.Tensor, slot: int, count: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`count` regular samples of a sorted shard as (value, sorter slot, position); unused entries carry
    slot -1. Ranks without values (slot -1) contribute none."""
    values = ordered.new_full((count,), float("inf"))
    slots = torch.full((count,), -1, dtype=torch.long, device=ordered.device)
    positions = torch.full((count,), -1, dtype=torch.long, device=ordered.device)
    n = ordered.numel()
    if slot < 0 or n == 0:
        return values, slots, positions
    taken = min(count, n)
    at = torch.arange(taken, dtype=torch.long, device=ordered.device)
    if count < n:
        at = (at + 1) * n // count - 1  # the last element of each of `count` equal parts
    values[:taken] = ordered[at]
    slots[:taken] = slot
    positions[:taken] = at
    return values, slots, positions


def _splitters(samples, sorters: int, group) -> List[Tuple[float, int, int]]:
    """The sorters - 1 splitters: every rank's samples ordered by (value, slot, position), cut evenly."""
    world = dist.get_world_size(group)
    columns = []
    for part in samples:
        every = [torch.empty_like(part) for _ in range(world)]
        dist.all_gather(every, part, group=group)
        columns.append(torch.cat(every).cpu().tolist())
    pool = sorted((float(v), int(s), int(p)) for v, s, p in zip(*columns) if int(s) >= 0)
    return [pool[max(0, min((i + 1) * len(pool) // sorters - 1, len(pool) - 1))] for i in range(sorters - 1)]


def _cuts(ordered: torch.Tensor, splitters, slot: int) -> List[int]:
    """Where each bucket of this sorted shard ends. A splitter is a (value, slot, position) triple, so
    equal values split by their origin: those of lower slots, and of the splitter's own slot up to its
    position, go left."""
    if slot < 0:
        return [0] * (len(splitters) + 2)
    cuts = [0]
    for value, owner, position in splitters:
        probe = torch.tensor(value, dtype=ordered.dtype, device=ordered.device)
        if slot == owner:
            end = position + 1
        else:
            end = int(torch.searchsorted(ordered, probe, right=slot < owner).item())
        cuts.append(max(cuts[-1], min(end, ordered.numel())))
    cuts.append(ordered.numel())
    return cuts


def _rebalance(merged: torch.Tensor, group) -> torch.Tensor:
    """Moves elements so that rank r holds exactly its share of the sorted sequence."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    sizes = _sizes(merged.numel(), merged.device, group)
    total = sum(sizes)
    start = sum(sizes[:rank])
    chunks = []
    for dest in range(world):
        lo = dest * (total // world) + min(dest, total % world)
        hi = lo + total // world + (1 if dest < total % world else 0)
        a, b = max(start, lo), min(start + merged.numel(), hi)
        chunks.append(merged[a - start:b - start] if a < b else merged.new_empty(0))
    return torch.cat(_exchange(chunks, group))


@torch.no_grad()
def solution(local_shard: torch.Tensor, group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    ordered = local_shard.sort().values
    sizes = _sizes(local_shard.numel(), local_shard.device, group)
    sorters = [r for r in range(world) if sizes[r] > 0]  # the ranks holding values take the buckets
    if not sorters:
        return local_shard.new_empty(0)
    slot = sorters.index(rank) if rank in sorters else -1
    splitters = _splitters(_samples(ordered, slot, len(sorters)), len(sorters), group)
    cuts = _cuts(ordered, splitters, slot)
    chunks = [ordered.new_empty(0) for _ in range(world)]
    for bucket, dest in enumerate(sorters):
        chunks[dest] = ordered[cuts[bucket]:cuts[bucket + 1]]
    received = [c for c in _exchange(chunks, group) if c.numel()]
    merged = torch.cat(received).sort().values if received else ordered.new_empty(0)
    return _rebalance(merged, group)
