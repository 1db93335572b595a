"""Inputs for 13_gemm_allreduce: per rank A (M, K) and B (K, N) with standard-normal values, different on every
rank and every trial."""

import hashlib

import torch

PROBLEM_ID = 13


def _generator(seed, rank, trial, device):
    # One stream per (seed, problem, rank, trial), hashed so that no two of them coincide (a sum such as
    # seed + rank would give seed + 1 on rank 0 the values of rank 1); drawn on the inputs' own device,
    # because every timed call gets fresh inputs and a CPU draw moved to the GPU costs milliseconds.
    key = hashlib.sha256(f"{seed}/{PROBLEM_ID}/{rank}/{trial}".encode()).digest()
    return torch.Generator(device=device).manual_seed(int.from_bytes(key[:8], "little") >> 1)


def make_inputs(rank, world, trial, seed, device, dtype, M, N, K):
    g = _generator(seed, rank, trial, device)
    A = torch.randn((M, K), generator=g, device=device)
    B = torch.randn((K, N), generator=g, device=device)
    return (A.to(device=device, dtype=dtype), B.to(device=device, dtype=dtype))
