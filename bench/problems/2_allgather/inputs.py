"""Inputs for 2_allgather: one (M, N) tensor per rank, every element equal to rank + 1 (trial-independent)."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((M, N), rank + 1, dtype=dtype, device=device),)
