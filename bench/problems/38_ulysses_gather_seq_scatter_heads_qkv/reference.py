"""Ulysses gather-sequence / scatter-heads of a packed QKV projection: rank r holds qkv (B, S, P), its part of
the sequence with q, k and v side by side on the last dimension (P/3 each). Each of q, k and v is split into W
equal blocks of P/(3W) columns; rank s receives block s of all three from every rank and returns them for the
whole sequence, the ranks' parts concatenated in rank order along seq_dim: (B, W*S, 3, P/(3W)), viewed as
(B, W*S, P/W) when restore_shape (q, k, v blocks side by side again), in the input dtype. When
unpadded_dim_size is set and not a multiple of W, the gathered sequence is cut back to its first
unpadded_dim_size positions. group None means the default group."""

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


def solution(qkv_tensor: torch.Tensor, seq_dim: int, group: Optional[dist.ProcessGroup] = None,
             unpadded_dim_size: Optional[int] = None, restore_shape: bool = True) -> torch.Tensor:
    group = group or dist.group.WORLD
    world = dist.get_world_size(group)
    shape = list(qkv_tensor.shape)
    width = shape[-1]
    # q, k and v on a dimension of their own, so that each rank receives its share of each.
    split = qkv_tensor.view(*shape[:-1], 3, width // 3)
    out = _exchange(split, scatter_dim=split.dim() - 1, gather_dim=seq_dim, group=group)
    if restore_shape:
        shape[seq_dim] *= world
        shape[-1] = width // world
        out = out.view(shape)
    if unpadded_dim_size and unpadded_dim_size % world:
        out = out.narrow(seq_dim, 0, unpadded_dim_size)
    return out
