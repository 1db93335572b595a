"""Hyena's long-convolution operator under context parallelism: all-to-alls trade the sequence split for a
channel split, every rank convolves its channels over the whole sequence with FFTs, and trades back.

The sequence of T = W * L tokens is cut into 2W chunks; rank r holds chunks r and 2W-1-r (zigzag order, when
with_zigzag_splitting) or the r-th block of L tokens, for all C channels: x1_seq, x2_seq, v_seq (B, C, L). h
(num_groups, F) holds one causal filter per group of group_dim consecutive channels and conv_bias (C,) one
weight per channel, the same on every rank. With u = x2 * v (input dtype), per channel c of group g, in float32:
y[t] = sum_{j <= t} h[g, j] u[t - j] + conv_bias[c] u[t] (computed by zero-padded FFTs of length 2T), rounded to
the input dtype, and z = x1 * y (input dtype). Rank r receives the channels of rank r's share (C / W, grouped by
rank) for the whole sequence, and returns its own tokens of z for every channel, transposed: (B, L, C) in the
input dtype. group None means the default group."""

from typing import Optional

import torch
import torch.distributed as dist


def _whole_sequence(x: torch.Tensor, group, zigzag: bool) -> torch.Tensor:
    """(B, C, L): this rank's tokens of all channels -> (B, C/W, W*L): all tokens, in order, of its channels."""
    world = dist.get_world_size(group)
    B, C, L = x.shape
    send = x.reshape(B, world, C // world, L).movedim(1, 0).contiguous()  # piece j: the channels of rank j
    got = torch.empty_like(send)                                          # piece j: the tokens of rank j
    dist.all_to_all_single(got, send, group=group)
    if not zigzag:
        return got.movedim(0, 2).reshape(B, C // world, world * L)
    halves = got.reshape(world, B, C // world, 2, L // 2)
    # Rank j's halves are chunks j and 2W-1-j: the first halves in rank order, then the second ones reversed.
    chunks = torch.cat([halves[:, :, :, 0], halves[:, :, :, 1].flip(0)], dim=0)
    return chunks.movedim(0, 2).reshape(B, C // world, world * L)


def _own_tokens(z: torch.Tensor, group, zigzag: bool) -> torch.Tensor:
    """The inverse: (B, C/W, T) all tokens of this rank's channels -> (B, C, T/W) this rank's tokens."""
    world = dist.get_world_size(group)
    B, c, T = z.shape
    L = T // world
    if zigzag:
        chunks = z.reshape(B, c, 2 * world, L // 2)
        pieces = torch.stack([chunks[:, :, :world], chunks[:, :, world:].flip(2)], dim=3)  # (B, c, W, 2, L/2)
        send = pieces.movedim(2, 0).reshape(world, B, c, L).contiguous()
    else:
        send = z.reshape(B, c, world, L).movedim(2, 0).contiguous()
    got = torch.empty_like(send)  # piece j: this rank's tokens of rank j's channels
    dist.all_to_all_single(got, send, group=group)
    return got.movedim(0, 1).reshape(B, world * c, L)


def _long_conv(u: torch.Tensor, filters: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Causal convolution of each channel of u (B, c, T) with its filter (c, F), plus bias * u, in float32
    through FFTs of length 2T; rounded to u's dtype."""
    T = u.shape[-1]
    n = 2 * T
    spectrum = torch.fft.rfft(u.float(), n=n) * (torch.fft.rfft(filters.float(), n=n) / n).unsqueeze(0)
    y = torch.fft.irfft(spectrum, n=n, norm="forward")[..., :T]
    return (y + u.float() * bias.float().unsqueeze(-1)).to(u.dtype)


@torch.no_grad()
def solution(x1_seq: torch.Tensor, x2_seq: torch.Tensor, v_seq: torch.Tensor, h: torch.Tensor,
             conv_bias: torch.Tensor, num_groups: int, group_dim: int, group: Optional[dist.ProcessGroup] = None,
             with_zigzag_splitting: bool = True) -> torch.Tensor:
    group = group or dist.group.WORLD
    world, me = dist.get_world_size(group), dist.get_rank(group)
    x1, x2, v = (_whole_sequence(t, group, with_zigzag_splitting) for t in (x1_seq, x2_seq, v_seq))
    channels, groups = x1.shape[1], num_groups // world
    filters = h[me * groups:(me + 1) * groups].repeat_interleave(group_dim, dim=0)
    z = x1 * _long_conv(x2 * v, filters, conv_bias[me * channels:(me + 1) * channels])
    return _own_tokens(z, group, with_zigzag_splitting).transpose(1, 2).contiguous()
