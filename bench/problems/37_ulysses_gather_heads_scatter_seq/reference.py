"""Ulysses gather-heads / scatter-sequence: rank r holds x (B, S, H, D), the whole sequence for its block of
heads; it pads the sequence with zeros to a multiple of W, sends sequence block s to rank s, and returns its own
sequence block for the heads of all ranks, concatenated in rank order along head_dim: (B, S'/W, W*H, D) in the
input dtype, S' the padded length. group None means the default group."""

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


def solution(x: torch.Tensor, seq_dim: int, head_dim: int,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    short = -x.size(seq_dim) % world
    if short:
        padding = list(x.shape)
        padding[seq_dim] = short
        x = torch.cat([x, x.new_zeros(padding)], dim=seq_dim)
    return _exchange(x, scatter_dim=seq_dim, gather_dim=head_dim, group=group)
