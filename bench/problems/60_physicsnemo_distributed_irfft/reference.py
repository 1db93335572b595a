"""Distributed 2-D complex-to-real inverse FFT of a half spectrum split on its rows: rank r holds the frequency
rows r·H/W .. (r+1)·H/W of the (B, C, H, X/2 + 1) complex64 half spectrum of a real (B, C, H, X) field, as x
(B, C, H/W, X/2 + 1). s = (H, X) are the output lengths and dim = (-2, -1) the transformed dimensions. Every
rank completes its rows to the full width X with the Hermitian mirror (column X - k of row h is the conjugate
of column k of row (H - h) mod H, for 0 < k < X/2; the mirror rows come from other ranks), inverse-transforms
them along the width, swaps blocks with the other ranks so that each holds all rows of X/W columns, and
inverse-transforms those along the height. Rank r returns the real part, the columns r·X/W .. (r+1)·X/W of the
field (orthonormal scaling): float32 (B, C, H, X/W)."""

from typing import Optional, Sequence

import torch
import torch.distributed as dist


def _gather_rows(x: torch.Tensor, group) -> torch.Tensor:
    """Every rank's rows (dimension -2) in rank order. Complex values travel as pairs of reals."""
    world = dist.get_world_size(group)
    local = torch.view_as_real(x.contiguous())
    everyone = local.new_empty((world * local.shape[0],) + tuple(local.shape[1:]))
    dist.all_gather_into_tensor(everyone, local, group=group)
    everyone = torch.view_as_complex(everyone).unflatten(0, (world, x.shape[0]))   # (W, ..., rows, cols)
    return torch.cat(list(everyone.unbind(0)), dim=-2)


def _hermitian_width(x: torch.Tensor, width: int, group) -> torch.Tensor:
    """x (..., rows, width/2 + 1), this rank's rows of the half spectrum, completed to (..., rows, width)."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    rows, kept = x.shape[-2], x.shape[-1]
    missing = width - kept
    full = x.new_zeros(x.shape[:-1] + (width,))
    full[..., :kept] = x
    if missing > 0:
        everyone = _gather_rows(x, group)
        height = everyone.shape[-2]
        mine = torch.arange(rank * rows, (rank + 1) * rows, device=x.device)
        mirror = (height - mine) % height
        # Column width - k of row h is conj of column k of the mirror row, k = 1 .. missing.
        source = everyone.index_select(-2, mirror)[..., 1:missing + 1]
        full[..., kept:] = torch.conj(source).flip(-1)
    return full


def _swap_blocks(t: torch.Tensor, split_dim: int, join_dim: int, group) -> torch.Tensor:
    """Block k of t along split_dim goes to rank k; the blocks received from ranks 0..W-1 are joined along
    join_dim. Complex values travel as pairs of reals."""
    world = dist.get_world_size(group)
    sent = torch.view_as_real(torch.stack(list(t.chunk(world, dim=split_dim))).contiguous())
    got = torch.empty_like(sent)
    dist.all_to_all_single(got, sent, group=group)
    return torch.cat(list(torch.view_as_complex(got).unbind(0)), dim=join_dim)


@torch.no_grad()
def solution(x: torch.Tensor, s: Optional[Sequence[int]], dim: Sequence[int], norm: str = "ortho",
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    rows_dim, cols_dim = int(dim[0]) % x.ndim, int(dim[1]) % x.ndim
    assert (rows_dim, cols_dim) == (x.ndim - 2, x.ndim - 1), "the transformed dimensions are the last two"
    if s is None:
        height, width = x.shape[rows_dim], 2 * (x.shape[cols_dim] - 1)   # PKB's: the local row count
    else:
        height, width = int(s[0]), int(s[1])
    full = _hermitian_width(x, width, group)
    along_width = torch.fft.ifft(full, n=width, dim=cols_dim, norm=norm)
    columns = _swap_blocks(along_width, cols_dim, rows_dim, group)
    field = torch.fft.ifft(columns, n=height, dim=rows_dim, norm=norm)
    return torch.real(field).contiguous()
