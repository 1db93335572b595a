"""Inputs for 18_tp_rms_norm: per rank a (M, N) slice of the hidden states and the matching (N,) slice of the
weight, both standard-normal (different on every rank and trial), and eps = 1e-5."""

import torch

PROBLEM_ID = 18


def _generator(seed, rank, trial):
    # One stream per (seed, problem, rank, trial), on the CPU so that CPU and GPU runs see the same values.
    return torch.Generator(device="cpu").manual_seed(seed + 1000 * PROBLEM_ID + rank + 1_000_003 * trial)


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    g = _generator(seed, rank, trial)
    hidden = torch.randn((M, N), generator=g)
    weight = torch.randn((N,), generator=g)
    return (hidden.to(device=device, dtype=dtype), weight.to(device=device, dtype=dtype), 1e-5)
