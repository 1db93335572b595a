"""Inputs for 5_scatter: rank 0 gets a (W, M, N) tensor whose slice i is filled with i + 1; every other rank
gets zeros of shape (M, N). Trial-independent; src stays at its default (0), so rank r must return r + 1."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    if rank == 0:
        values = torch.arange(1, world + 1, dtype=torch.float32).view(world, 1, 1)
        return (values.expand(world, M, N).to(device=device, dtype=dtype).contiguous(),)
    return (torch.zeros((M, N), dtype=dtype, device=device),)
