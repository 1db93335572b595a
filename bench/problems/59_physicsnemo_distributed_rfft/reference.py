"""Distributed 2-D real-to-complex FFT of a field split on its width: rank r holds the columns r·X/W ..
(r+1)·X/W of a real float32 field x of shape (B, H, X), as x (B, H, X/W). s = (H, X) are the transform
lengths and dim = (1, 2) the transformed dimensions (height, then width). Every rank transforms its columns
along the height, the ranks then swap blocks so that each holds all columns of a band of H/W frequency rows, and
every rank transforms those rows along the width. Rank r returns the rows r·H/W .. (r+1)·H/W of the full
two-dimensional transform (orthonormal scaling), keeping the X/2 + 1 non-negative width frequencies:
complex64 (B, H/W, X/2 + 1)."""

from typing import Optional, Sequence

import torch
import torch.distributed as dist


def _swap_blocks(t: torch.Tensor, split_dim: int, join_dim: int, group) -> torch.Tensor:
    """Block k of t along split_dim goes to rank k; the blocks received from ranks 0..W-1 are joined along
    join_dim. Complex values travel as pairs of reals (all_to_all_single carries real dtypes everywhere)."""
    world = dist.get_world_size(group)
    pieces = torch.stack(list(t.chunk(world, dim=split_dim)))   # (W, ..., block, ...)
    sent = torch.view_as_real(pieces.contiguous())
    got = torch.empty_like(sent)
    dist.all_to_all_single(got, sent, group=group)
    received = torch.view_as_complex(got)
    return torch.cat(list(received.unbind(0)), dim=join_dim)


@torch.no_grad()
def solution(x: torch.Tensor, s: Sequence[int], dim: Sequence[int], norm: str = "ortho",
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    first, second = int(dim[0]), int(dim[1])
    along_first = torch.fft.fft(x, n=None if s[0] is None else int(s[0]), dim=first, norm=norm)
    band = _swap_blocks(along_first, first, second, group)
    full = torch.fft.fft(band, n=None if s[1] is None else int(s[1]), dim=second, norm=norm)
    return full.narrow(second, 0, full.shape[second] // 2 + 1).contiguous()
