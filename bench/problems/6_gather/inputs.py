"""Inputs for 6_gather: one (M, N) tensor per rank, every element equal to rank + 1 (trial-independent).

dst stays at its default (0)."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((M, N), rank + 1, dtype=dtype, device=device),)
