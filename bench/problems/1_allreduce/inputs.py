"""Inputs for 1_allreduce: one (M, N) tensor per rank, every element equal to rank + 1.

The values do not depend on the trial or the seed, so the expected sum is W * (W + 1) / 2 everywhere.
"""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((M, N), rank + 1, dtype=dtype, device=device),)
