"""Inputs for 7_reducescatter: one (W*M, N) tensor per rank, every element equal to rank + 1
(trial-independent), so every rank's result is W * (W + 1) / 2 everywhere."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((world * M, N), rank + 1, dtype=dtype, device=device),)
