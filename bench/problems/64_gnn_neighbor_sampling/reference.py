"""Distributed two-hop neighbour sampling on a graph whose nodes are split over the ranks (node_to_rank (V,)
int64 names every node's owner). Each rank stores the in-neighbours of the nodes it owns in CSC form:
local_adj_row_ptr (V + 1,) int64 and local_adj_col int64, so that the neighbours of node v are
local_adj_col[ptr[v]:ptr[v + 1]] (empty for nodes it does not own) and an edge's id is its position there.

Rank r starts from its seed_nodes (int64, distinct). For each fanout k: it sends every frontier node to its
owner, which answers with the node's first min(k, degree) neighbours and their edge ids; the answers are
arranged in frontier order, and the nodes not seen before (in order of first appearance) become the next
frontier and are appended to the node list. Rank r returns (nodes: the seeds, then every newly seen node in
order; row: each sampled edge's neighbour as a position in nodes; col: its frontier node's position; edge ids:
the owners' local edge ids), four int64 tensors whose lengths depend on the graph. The sampling steps are host
loops over the nodes, as in PKB."""

from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist


def _exchange(send: torch.Tensor, send_counts: List[int], group) -> Tuple[torch.Tensor, List[int]]:
    """all_to_all_single of variable pieces: (what arrived, how many from each rank)."""
    counts = torch.tensor(send_counts, dtype=torch.long, device=send.device)
    got_counts = torch.empty_like(counts)
    dist.all_to_all_single(got_counts, counts, group=group)
    got_counts = got_counts.tolist()
    got = send.new_empty((sum(got_counts),))
    dist.all_to_all_single(got, send, output_split_sizes=got_counts, input_split_sizes=send_counts, group=group)
    return got, got_counts


def _sample_owned(nodes: torch.Tensor, k: int, ptr: torch.Tensor, col: torch.Tensor):
    """The first min(k, degree) neighbours (all with k < 0) of each node, their edge ids, and their counts."""
    picked, edges, counts = [], [], []
    for v in nodes.tolist():
        start, end = int(ptr[v].item()), int(ptr[v + 1].item())
        take = end - start if k < 0 else min(k, end - start)
        picked.append(col[start:start + take])
        edges.append(torch.arange(start, start + take, device=nodes.device))
        counts.append(take)
    empty = nodes.new_empty(0)
    return (torch.cat(picked) if picked else empty, torch.cat(edges) if edges else empty, counts)


def _first_seen(known: torch.Tensor, found: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(the values of found not in known, in order of first appearance; known followed by them)."""
    both = torch.cat([known, found])
    _, first = np.unique(both.cpu().numpy(), return_index=True)
    keep = torch.from_numpy(np.sort(first)).to(both.device)
    everything = both[keep]
    return everything[known.numel():], everything


@torch.no_grad()
def solution(seed_nodes: torch.Tensor, fanouts: List[int], local_adj_row_ptr: torch.Tensor,
             local_adj_col: torch.Tensor, node_to_rank: torch.Tensor, group: Optional[dist.ProcessGroup] = None,
             replace: bool = False) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    frontier = seed_nodes.to(torch.long)
    nodes = frontier.clone()
    sampled, targets, edge_ids = [], [], []
    for k in fanouts:
        if frontier.numel() == 0:
            break
        owner = node_to_rank[frontier].long()
        order = torch.argsort(owner, stable=True)        # the frontier grouped by owner, in order
        asked, asked_from = _exchange(frontier[order], torch.bincount(owner, minlength=world).tolist(), group)
        found, found_edges, found_counts = _sample_owned(asked, int(k), local_adj_row_ptr, local_adj_col)
        # Answers go back to the askers: per asker, the neighbours of its nodes, and how many per node.
        per_asker, at = [], 0
        for n in asked_from:
            per_asker.append(sum(found_counts[at:at + n]))
            at += n
        answers, _ = _exchange(found, per_asker, group)
        answer_edges, _ = _exchange(found_edges, per_asker, group)
        answer_counts, _ = _exchange(torch.tensor(found_counts, dtype=torch.long, device=frontier.device),
                                     asked_from, group)
        # Back to frontier order: the answer for frontier[order[i]] is piece i.
        pieces = answer_counts.tolist()
        node_pieces = list(torch.split(answers, pieces))
        edge_pieces = list(torch.split(answer_edges, pieces))
        slot = torch.empty_like(order)
        slot[order] = torch.arange(order.numel(), device=order.device)
        new_nodes, new_edges, new_targets = [], [], []
        for i, v in enumerate(frontier.tolist()):
            j = int(slot[i].item())
            new_nodes.append(node_pieces[j])
            new_edges.append(edge_pieces[j])
            new_targets.append(frontier.new_full((pieces[j],), v))
        found_nodes = torch.cat(new_nodes)
        if found_nodes.numel() == 0:
            break
        frontier, nodes = _first_seen(nodes, found_nodes)
        sampled.append(found_nodes)
        targets.append(torch.cat(new_targets))
        edge_ids.append(torch.cat(new_edges))
    empty = nodes.new_empty(0)
    neighbours = torch.cat(sampled) if sampled else empty
    if neighbours.numel() == 0:
        return nodes, empty, empty, empty
    position = torch.full((int(nodes.max().item()) + 1,), -1, dtype=torch.long, device=nodes.device)
    position[nodes] = torch.arange(nodes.numel(), device=nodes.device)
    return nodes, position[neighbours], position[torch.cat(targets)], torch.cat(edge_ids)
