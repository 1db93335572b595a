"""Inputs for 4_reduce: (tensor, dst) with tensor (M, N) filled with rank + 1 and dst = 0 (trial-independent)."""

import torch


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    return (torch.full((M, N), rank + 1, dtype=dtype, device=device), 0)
