"""Inputs for 13_gemm_allreduce: per rank A (M, K) and B (K, N) with standard-normal values, different on every
rank and every trial."""

import torch

PROBLEM_ID = 13


def _generator(seed, rank, trial):
    # One stream per (seed, problem, rank, trial), on the CPU so that CPU and GPU runs see the same values.
    return torch.Generator(device="cpu").manual_seed(seed + 1000 * PROBLEM_ID + rank + 1_000_003 * trial)


def make_inputs(rank, world, trial, seed, device, dtype, M, N, K):
    g = _generator(seed, rank, trial)
    A = torch.randn((M, K), generator=g)
    B = torch.randn((K, N), generator=g)
    return (A.to(device=device, dtype=dtype), B.to(device=device, dtype=dtype))
