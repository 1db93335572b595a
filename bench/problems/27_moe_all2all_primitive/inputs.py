"""Inputs for 27_moe_all2all_primitive: per rank a standard-normal (M, N) tensor (different on every rank and
trial), equal splits of M/W rows to and from every rank, and group None (the default group). M must be
divisible by the world size."""

import hashlib

import torch

PROBLEM_ID = 27


def _generator(seed, rank, trial, device):
    # One stream per (seed, problem, rank, trial), hashed so that no two of them coincide (a sum such as
    # seed + rank would give seed + 1 on rank 0 the values of rank 1); drawn on the inputs' own device,
    # because every timed call gets fresh inputs and a CPU draw moved to the GPU costs milliseconds.
    key = hashlib.sha256(f"{seed}/{PROBLEM_ID}/{rank}/{trial}".encode()).digest()
    return torch.Generator(device=device).manual_seed(int.from_bytes(key[:8], "little") >> 1)


def make_inputs(rank, world, trial, seed, device, dtype, M, N):
    if M % world != 0:
        raise ValueError(f"27_moe_all2all_primitive: M={M} is not divisible by the world size {world}")
    g = _generator(seed, rank, trial, device)
    tokens = torch.randn((M, N), generator=g, device=device).to(device=device, dtype=dtype)
    splits = [M // world] * world
    return (tokens, list(splits), list(splits), None)
