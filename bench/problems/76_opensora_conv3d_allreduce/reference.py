"""Open-Sora's input-channel-parallel 3-D convolution: rank r holds its slice of the input channels
(B, C/W, T, H, X) and the matching slice of the weight (C, C/W, k, k, k). Each rank convolves its slice (no
bias), the partial outputs are summed over ranks, and the bias (C,) is added once. Every rank returns the
whole output (B, C, T', H', X') in the input's dtype. Inputs too large for one convolution call are split
into channel chunks whose partial sums are accumulated in float32."""

import math
from typing import List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed as dist
import torch.nn.functional as F

# Above this many elements in the input or output, a single conv3d call is split by channels.
_MAX_NUMEL = 2 ** 31

Triple = Tuple[int, int, int]


def _triple(v: Union[int, Sequence[int]]) -> Triple:
    return (v, v, v) if isinstance(v, int) else tuple(v)


def _pieces(numel: int, channels: int) -> int:
    """How many channel chunks keep each below _MAX_NUMEL, rounded up to a count that chunks evenly."""
    wanted = math.ceil(numel / _MAX_NUMEL)
    return math.ceil(channels / (channels // wanted))


def _conv(x: torch.Tensor, weight: torch.Tensor, stride: Triple, padding: Triple, dilation: Triple,
          groups: int) -> torch.Tensor:
    out_channels, in_channels = weight.shape[:2]
    spatial = [(n + 2 * p - d * (k - 1) - 1) // s + 1
               for n, k, s, p, d in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation)]
    x_pieces = _pieces(x.numel(), in_channels)
    out_pieces = _pieces(x.shape[0] * out_channels * math.prod(spatial), out_channels)
    if x_pieces == 1 and out_pieces == 1:
        return F.conv3d(x, weight, None, stride, padding, dilation, groups)
    blocks: List[torch.Tensor] = []
    for w_out in weight.chunk(out_pieces, dim=0):
        acc = None
        for x_in, w_in in zip(x.chunk(x_pieces, dim=1), w_out.chunk(x_pieces, dim=1)):
            part = F.conv3d(x_in, w_in, None, stride, padding, dilation, groups).float()
            acc = part if acc is None else acc + part
        blocks.append(acc.to(x.dtype))
    return torch.cat(blocks, dim=1)


@torch.no_grad()
def solution(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
             stride: Union[int, Tuple[int, int, int]], padding: Union[int, Tuple[int, int, int]],
             dilation: Union[int, Tuple[int, int, int]], groups: int = 1,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    group = group or dist.group.WORLD
    out = _conv(input, weight, _triple(stride), _triple(padding), _triple(dilation), groups)
    dist.all_reduce(out, op=dist.ReduceOp.SUM, group=group)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1, 1)
    return out
