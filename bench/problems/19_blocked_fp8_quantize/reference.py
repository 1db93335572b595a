"""Blocked fp8 quantisation: every rank splits its (M, N) tensor into blocks of block_size consecutive elements
along the last dimension; per block the scale is s = max|x| / 448 (448 is the largest e4m3 value) and the codes
are y = x / s rounded to float8_e4m3fn (a block of zeros keeps s = 0 and divides by 1). Every rank returns
all ranks' codes and scales stacked on rows in rank order: a tuple of y (W*M, N) float8_e4m3fn and s
(W*M, N / block_size) float32.

The quantisation is plain torch here (PKB's reference does the same arithmetic in a Triton kernel); the
division is in float32."""

from typing import Tuple

import torch
import torch.distributed as dist

E4M3_MAX = 448.0


def solution(local_tensor: torch.Tensor, block_size: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    if local_tensor.size(-1) % block_size != 0:
        raise ValueError(f"the last dimension {local_tensor.size(-1)} is not a multiple of block_size {block_size}")
    blocks = local_tensor.to(torch.float32).reshape(*local_tensor.shape[:-1], -1, block_size)
    scales = blocks.abs().amax(dim=-1) / E4M3_MAX
    safe = torch.where(scales == 0, torch.ones_like(scales), scales)
    codes = (blocks / safe.unsqueeze(-1)).to(torch.float8_e4m3fn).reshape(local_tensor.shape)

    # Gather the codes as bytes (collectives do not take fp8) and the scales, both concatenated on rows.
    world = dist.get_world_size()
    codes_all = torch.empty((world * codes.shape[0], *codes.shape[1:]), dtype=torch.uint8, device=codes.device)
    dist.all_gather_into_tensor(codes_all, codes.view(torch.uint8).contiguous())
    scales_all = torch.empty((world * scales.shape[0], *scales.shape[1:]), dtype=scales.dtype, device=scales.device)
    dist.all_gather_into_tensor(scales_all, scales.contiguous())
    return codes_all.view(torch.float8_e4m3fn), scales_all
