"""Inputs for 8_alltoall: one (W, M, N) tensor per rank whose slice d is filled with 10 * rank + d
(trial-independent), so on rank r slice s of the result holds 10 * s + r."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    values = (10 * rank + torch.arange(world, dtype=torch.float32)).view(world, 1, 1)
    return (values.expand(world, M, N).to(device=device, dtype=dtype).contiguous(),)
