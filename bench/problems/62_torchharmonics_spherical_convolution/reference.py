"""Discrete-continuous (DISCO) convolution on the sphere, distributed over a polar x azimuth mesh (plain torch).

Rank r holds x (B, C, nlat_r, nlon_r): its latitude band (split over polar_group) and longitude range (split
over azimuth_group) of C channels. The filter psi is a sparse (K, nlat_out, nlat_r * nlon_in) tensor of this
rank's latitude band, given as psi_indices (3, nnz), psi_values (nnz,) and psi_size. Steps:
1. transpose over azimuth_group: every rank gets all longitudes of its share of the channels;
2. contraction: for each output longitude p, y[..., p] = psi @ x with x rolled by p * (nlon_in / nlon_out)
   longitudes, giving (B, C_share, K, nlat_out, nlon_out);
3. sum over polar_group (in float32) and keep this rank's band of output latitudes;
4. transpose back over azimuth_group: all channels, this rank's share of the output longitudes;
5. out[b, g*o + j, x, y] = sum over c, k of x[b, g*cg + c, k, x, y] * weight[g*o + j, c, k] per group g of
   `groups` (cg and o channels per group), plus bias.
Returns (B, C_out, nlat_out / P, nlon_out / A) in x's dtype. Splits follow PKB's rule: ceil(size / n) per rank,
the last rank the rest. Groups None mean the default group."""

from typing import List, Optional

import torch
import torch.distributed as dist


def _split_sizes(size: int, parts: int) -> List[int]:
    if parts == 1:
        return [size]
    chunk = (size + parts - 1) // parts
    last = max(0, size - chunk * (parts - 1))
    if last == 0:
        chunk = size // parts
        last = size - chunk * (parts - 1)
    return [chunk] * (parts - 1) + [last]


def _transpose(x: torch.Tensor, split_dim: int, join_dim: int, join_sizes: List[int], group) -> torch.Tensor:
    """Sends split j of x along split_dim to rank j of the group, and joins along join_dim what every rank j
    sends back (its piece is join_sizes[j] long there). One flat all_to_all_single carries all pieces."""
    world, me = dist.get_world_size(group), dist.get_rank(group)
    send = [piece.contiguous() for piece in torch.split(x, _split_sizes(x.shape[split_dim], world), dim=split_dim)]
    shapes = []
    for n in join_sizes:
        shape = list(send[me].shape)
        shape[join_dim] = n
        shapes.append(shape)
    counts = [torch.Size(s).numel() for s in shapes]
    received = torch.empty(sum(counts), dtype=x.dtype, device=x.device)
    dist.all_to_all_single(received, torch.cat([p.reshape(-1) for p in send]), output_split_sizes=counts,
                           input_split_sizes=[p.numel() for p in send], group=group)
    pieces = [flat.view(shape) for flat, shape in zip(torch.split(received, counts), shapes)]
    return torch.cat(pieces, dim=join_dim)


def _contract(x: torch.Tensor, psi: torch.Tensor, nlon_out: int) -> torch.Tensor:
    """y[b, c, k, lat, p] = sum over (lat', lon') of psi[k, lat, lat' * nlon_in + lon'] * x[b, c, lat', lon'
    + p * nlon_in / nlon_out], longitudes cyclic."""
    batch, chans, nlat_in, nlon_in = x.shape
    kernel, nlat_out, _ = psi.shape
    step = nlon_in // nlon_out
    cols = x.reshape(batch * chans, nlat_in, nlon_in).permute(1, 2, 0)  # (lat', lon', b*c)
    y = torch.zeros(nlon_out, kernel, nlat_out, batch * chans, dtype=x.dtype, device=x.device)
    for p in range(nlon_out):
        rolled = torch.roll(cols, -p * step, dims=1).reshape(1, nlat_in * nlon_in, batch * chans)
        y[p] = torch.bmm(psi, rolled.expand(kernel, -1, -1))
    return y.permute(3, 1, 2, 0).reshape(batch, chans, kernel, nlat_out, nlon_out)


@torch.no_grad()
def solution(x: torch.Tensor, psi_indices: torch.Tensor, psi_values: torch.Tensor, psi_size: List[int],
             weight: torch.Tensor, groups: int, nlon_out: int, nlon_in: int,
             azimuth_group: Optional[dist.ProcessGroup] = None, polar_group: Optional[dist.ProcessGroup] = None,
             bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    azimuth_group = azimuth_group or dist.group.WORLD
    polar_group = polar_group or dist.group.WORLD
    azimuth = dist.get_world_size(azimuth_group)
    polar = dist.get_world_size(polar_group)
    psi = torch.sparse_coo_tensor(psi_indices, psi_values, size=tuple(psi_size), device=x.device,
                                  check_invariants=True).coalesce()
    channels = x.shape[1]

    if azimuth > 1:  # channels split, longitudes joined
        x = _transpose(x, 1, 3, _split_sizes(nlon_in, azimuth), azimuth_group)
    x = _contract(x, psi, nlon_out)
    if polar > 1:
        summed = x.to(torch.float32).contiguous()
        dist.all_reduce(summed, group=polar_group)
        x = summed.to(x.dtype)
        x = torch.split(x, _split_sizes(x.shape[-2], polar), dim=-2)[dist.get_rank(polar_group)]
    if azimuth > 1:  # longitudes split, channels joined
        x = _transpose(x, 4, 1, _split_sizes(channels, azimuth), azimuth_group)

    B, C, K, H, W = x.shape
    per_group = C // groups
    x = x.reshape(B, groups, per_group, K, H, W)
    out = torch.einsum("bgckxy,gock->bgoxy", x, weight.reshape(groups, -1, weight.shape[1], weight.shape[2]))
    out = out.reshape(B, -1, H, W)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out
