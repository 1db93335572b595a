"""Ulysses gather-sequence / scatter-heads: rank r holds x (B, S, H, D), its part of the sequence with all heads;
it sends head block s (H/W heads) to rank s and returns the whole sequence for its own head block, the blocks
of all ranks concatenated in rank order along seq_dim: (B, W*S, H/W, D) in the input dtype. When
unpadded_dim_size is set and not a multiple of W, the gathered sequence is cut back to its first
unpadded_dim_size positions (the rest was padding). group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist


def _exchange(x: torch.Tensor, scatter_dim: int, gather_dim: int, group) -> torch.Tensor:
    """Piece s of x along scatter_dim goes to rank s; the pieces received are concatenated along gather_dim."""
    world = dist.get_world_size(group)
    if x.size(scatter_dim) % world:
        raise ValueError(f"dimension {scatter_dim} of size {x.size(scatter_dim)} does not split into {world} pieces")
    outgoing = torch.stack(torch.tensor_split(x, world, dim=scatter_dim))
    incoming = torch.empty_like(outgoing)
    dist.all_to_all_single(incoming, outgoing, group=group)
    return torch.cat(incoming.unbind(0), dim=gather_dim)


def solution(x: torch.Tensor, seq_dim: int, head_dim: int, group: Optional[dist.ProcessGroup] = None,
             unpadded_dim_size: int = 0) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    x = _exchange(x, scatter_dim=head_dim, gather_dim=seq_dim, group=group)
    if unpadded_dim_size and unpadded_dim_size % world:
        x = x.narrow(seq_dim, 0, unpadded_dim_size)
    return x
