"""Mean reduce-scatter of gradients through an fp8 round trip with a delayed scale: rank r holds a flat
gradient (W*P,) and its amax history (16,) in bf16. The history is rolled by one (the oldest entry drops) and
the gradient's max|g| (rounded to bf16) becomes its newest entry; the scale is the history's max (at least
1e-12) / 448 in float32 (448 is the largest e4m3 value). Each element is divided by the scale, rounded to
float8_e4m3fn, multiplied back by the scale in float32 and rounded to the gradient's dtype. The round-tripped
gradients are summed over ranks in the input dtype, rank r keeps chunk r (P elements) divided by W. Returns a
tuple: the chunk (P,) in the input dtype, and the updated history (16,) in bf16."""

from typing import Tuple

import torch
import torch.distributed as dist

E4M3_MAX = 448.0


def _updated_history(history: torch.Tensor, amax: torch.Tensor) -> torch.Tensor:
    """The history shifted one place towards its start, with amax as the newest (last) entry."""
    out = torch.roll(history, shifts=-1, dims=0)
    out[-1] = amax.to(out.dtype)
    return out


def _fp8_round_trip(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    codes = (x.to(torch.float32) / scale).to(torch.float8_e4m3fn)
    return (codes.to(torch.float32) * scale).to(x.dtype)


@torch.no_grad()
def solution(flat_grads: torch.Tensor, amax_history: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    world = dist.get_world_size()
    history = _updated_history(amax_history, flat_grads.abs().max().to(torch.float32))
    scale = history.max().clamp(min=1e-12).to(torch.float32) / E4M3_MAX
    recon = _fp8_round_trip(flat_grads, scale)
    shard = flat_grads.new_empty(flat_grads.numel() // world)
    dist.reduce_scatter_tensor(shard, recon.contiguous(), op=dist.ReduceOp.SUM)
    shard.div_(world)
    return shard, history
