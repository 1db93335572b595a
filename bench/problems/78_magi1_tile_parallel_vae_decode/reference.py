"""Tile-parallel decoding of a video latent (MAGI-1's VAE decode with a stand-in decoder): z (B, C, T, H, X) is
cut into overlapping tiles of tile_latent_min_length x tile_latent_min_height x tile_latent_min_width latent
voxels (strides: the tile size times 1 - the overlap factor), numbered row-major over (t, h, w). The tiles,
sorted by size (largest first, ties by number), are dealt round-robin to the ranks. A rank "decodes" each of
its tiles (trilinear upsampling in float32 by temporal_upsample x spatial_upsample x spatial_upsample, spatial
upsample times sr_ratio; the first 3 channels, to bf16), every rank gets every decoded tile, and each rank blends
its tiles with their decoded predecessors along t, then h, then w (a linear ramp over the overlap, in bf16) and
crops them to the stride. Every rank gets all cropped tiles and returns the stitched video, bf16 (B, 3, ~T·tu,
~H·su, ~X·su), the same on every rank. Each rank decodes the tiles of its own z."""

from typing import List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _coords(index: int, counts: List[int]) -> List[int]:
    out = []
    for n in reversed(counts):
        out.append(index % n)
        index //= n
    return out[::-1]


def _number(coords: List[int], counts: List[int]) -> int:
    index = 0
    for c, n in zip(coords, counts):
        index = index * n + c
    return index


def _deal(sizes: List[int], world: int, rank: int) -> Tuple[List[int], List[int]]:
    """(this rank's tile numbers, all ranks' tile numbers in rank order)."""
    by_size = sorted(range(len(sizes)), key=lambda i: sizes[i], reverse=True)
    shares = [by_size[r::world] for r in range(world)]
    return shares[rank], [i for share in shares for i in share]


def _share_tiles(tiles: List[torch.Tensor], order: List[int], like: torch.Tensor, group) -> List[torch.Tensor]:
    """Every rank's tiles (shapes differ), listed by tile number: the shapes go round as objects, the values
    as one flat buffer per rank padded to the largest."""
    world = dist.get_world_size(group)
    shapes: List[List[Tuple[int, ...]]] = [[] for _ in range(world)]
    dist.all_gather_object(shapes, [tuple(t.shape) for t in tiles], group=group)
    lengths = [sum(torch.Size(s).numel() for s in rank_shapes) for rank_shapes in shapes]
    flat = like.new_zeros(max(lengths))
    if tiles:
        mine = torch.cat([t.reshape(-1) for t in tiles])
        flat[:mine.numel()] = mine
    everyone = like.new_empty(world * flat.numel())
    dist.all_gather_into_tensor(everyone, flat, group=group)
    received = []
    for r, rank_shapes in enumerate(shapes):
        at = r * flat.numel()
        for s in rank_shapes:
            n = torch.Size(s).numel()
            received.append(everyone[at:at + n].view(s))
            at += n
    numbered = dict(zip(order, received))
    return [numbered[i] for i in sorted(numbered)]


def _decode(tile: torch.Tensor, spatial: int, temporal: int) -> torch.Tensor:
    up = F.interpolate(tile.float(), scale_factor=(temporal, spatial, spatial), mode="trilinear",
                       align_corners=False)
    if up.shape[1] < 3:
        up = up.repeat(1, -(-3 // up.shape[1]), 1, 1, 1)
    return up[:, :3].to(torch.bfloat16)


def _blend(before: torch.Tensor, tile: torch.Tensor, extent: int, dim: int) -> torch.Tensor:
    """The first `extent` slices of tile along dim ramp linearly from before's last ones (in place)."""
    extent = min(before.shape[dim], tile.shape[dim], extent)
    for i in range(extent):
        w = i / extent
        tile.select(dim, i).copy_(before.select(dim, before.shape[dim] - extent + i) * (1.0 - w)
                                  + tile.select(dim, i) * w)
    return tile


@torch.no_grad()
def solution(z: torch.Tensor, tile_latent_min_length: int, tile_latent_min_height: int,
             tile_latent_min_width: int, spatial_tile_overlap_factor: float, temporal_tile_overlap_factor: float,
             spatial_upsample: int, temporal_upsample: int, sr_ratio: int = 1, first_frame_as_image: bool = False,
             group: Optional[dist.ProcessGroup] = None) -> torch.Tensor:
    distributed = dist.is_available() and dist.is_initialized()
    group = (group or dist.group.WORLD) if distributed else None
    tile = [tile_latent_min_length + int(first_frame_as_image), tile_latent_min_height, tile_latent_min_width]
    spatial = spatial_upsample * sr_ratio
    overlap = [temporal_tile_overlap_factor, spatial_tile_overlap_factor, spatial_tile_overlap_factor]
    stride = [int(n * (1.0 - f)) for n, f in zip(tile, overlap)]
    if min(stride) <= 0:
        raise ValueError("the tile overlap factors must leave every stride positive")
    decoded_size = [tile[0] * temporal_upsample, tile[1] * spatial, tile[2] * spatial]
    ramp = [int(n * f) for n, f in zip(decoded_size, overlap)]
    keep = [n - b for n, b in zip(decoded_size, ramp)]
    counts = [-(-z.shape[2 + d] // stride[d]) for d in range(3)]

    latent = []
    for index in range(counts[0] * counts[1] * counts[2]):
        start = [c * s for c, s in zip(_coords(index, counts), stride)]
        latent.append(z[:, :, start[0]:start[0] + tile[0], start[1]:start[1] + tile[1], start[2]:start[2] + tile[2]])
    if group is None:
        mine = order = list(range(len(latent)))
    else:
        mine, order = _deal([t.numel() for t in latent], dist.get_world_size(group), dist.get_rank(group))

    decoded = [_decode(latent[i], spatial, temporal_upsample) for i in mine]
    like = decoded[0] if decoded else _decode(latent[0], spatial, temporal_upsample)
    every_decoded = _share_tiles(decoded, order, like, group) if group is not None else decoded

    cropped = []
    for i in mine:
        at = _coords(i, counts)
        out = every_decoded[i].clone()
        for d in range(3):
            if at[d] > 0:
                before = list(at)
                before[d] -= 1
                out = _blend(every_decoded[_number(before, counts)], out, ramp[d], 2 + d)
        cropped.append(out[:, :, :keep[0], :keep[1], :keep[2]].contiguous())
    every_cropped = _share_tiles(cropped, order, like, group) if group is not None else cropped

    frames = []
    for t in range(counts[0]):
        rows = [torch.cat([every_cropped[_number([t, h, w], counts)] for w in range(counts[2])], dim=4)
                for h in range(counts[1])]
        frames.append(torch.cat(rows, dim=3))
    return torch.cat(frames, dim=2)
