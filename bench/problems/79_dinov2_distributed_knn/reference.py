"""DINOv2's k-nearest-neighbour evaluation with the training set sharded over ranks: rank r holds Q test
features (Q, D), its shard of the training features transposed (D, L) and their labels (1, L). Every rank's
queries are scored against every rank's shard (similarity = query · train feature, in the features' dtype);
rank r returns, for each of its own queries, the max_k largest similarities over all ranks' training
features, from the largest, and the labels of the training features they belong to: (similarities (Q, max_k)
in the features' dtype, labels int64 (Q, max_k)). Equal similarities may come in any order."""

from typing import List, Optional, Tuple

import torch
import torch.distributed as dist


def _best(similarity: torch.Tensor, labels: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """The k largest similarities of each row, sorted, with the labels of their columns."""
    values, columns = similarity.topk(k, dim=1, largest=True, sorted=True)
    return values, labels.expand(similarity.shape[0], -1).gather(1, columns)


def _queries_of(owner: int, own: torch.Tensor, rank: int, group) -> torch.Tensor:
    """Rank `owner`'s queries on every rank (their shape first, since ranks need not know it)."""
    shape = torch.tensor(own.shape, dtype=torch.long, device=own.device)
    dist.broadcast(shape, src=dist.get_global_rank(group, owner), group=group)
    queries = own.contiguous() if rank == owner else own.new_empty([int(n) for n in shape.tolist()])
    dist.broadcast(queries, src=dist.get_global_rank(group, owner), group=group)
    return queries


@torch.no_grad()
def solution(test_features_rank: torch.Tensor, train_features_rank_T: torch.Tensor,
             train_labels_rank: torch.Tensor, max_k: int,
             group: Optional[dist.ProcessGroup] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    group = group or dist.group.WORLD
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if max_k > train_features_rank_T.shape[1]:
        raise ValueError(f"max_k = {max_k} exceeds this rank's {train_features_rank_T.shape[1]} training features")
    mine = None
    # One round per owner of queries: everyone scores them against its shard, the owner merges the candidates.
    for owner in range(world):
        queries = _queries_of(owner, test_features_rank, rank, group)
        values, labels = _best(queries @ train_features_rank_T, train_labels_rank, max_k)
        gathered: Optional[List[List[torch.Tensor]]] = None
        if rank == owner:
            gathered = [[torch.empty_like(values) for _ in range(world)],
                        [torch.empty_like(labels) for _ in range(world)]]
        dst = dist.get_global_rank(group, owner)
        dist.gather(values, gather_list=gathered[0] if gathered else None, dst=dst, group=group)
        dist.gather(labels, gather_list=gathered[1] if gathered else None, dst=dst, group=group)
        if gathered:
            mine = _best(torch.cat(gathered[0], dim=1), torch.cat(gathered[1], dim=1), max_k)
    return mine
