"""Inputs for 18_tp_rms_norm: per rank a (M, N) slice of the hidden states and the matching (N,) slice of the
weight, both standard-normal (different on every rank and trial), and eps = 1e-5."""

import hashlib

import torch

PROBLEM_ID = 18


def _generator(seed, rank, trial, device):
    # One stream per (seed, problem, rank, trial), hashed so that no two of them coincide (a sum such as
    # seed + rank would give seed + 1 on rank 0 the values of rank 1); drawn on the inputs' own device,
    # because every timed call gets fresh inputs and a CPU draw moved to the GPU costs milliseconds.
    key = hashlib.sha256(f"{seed}/{PROBLEM_ID}/{rank}/{trial}".encode()).digest()
    return torch.Generator(device=device).manual_seed(int.from_bytes(key[:8], "little") >> 1)


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    g = _generator(seed, rank, trial, device)
    hidden = torch.randn((M, N), generator=g, device=device)
    weight = torch.randn((N,), generator=g, device=device)
    return (hidden.to(device=device, dtype=dtype), weight.to(device=device, dtype=dtype), 1e-5)
