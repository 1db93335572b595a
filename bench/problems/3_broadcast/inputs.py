"""Inputs for 3_broadcast: one (M, N) tensor per rank, every element equal to rank + 1 (trial-independent).

src is left at its default (0), so every rank must return a tensor of ones.
"""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((M, N), rank + 1, dtype=dtype, device=device),)
