"""Family 3, phase detection through the judge's phase file.

What it does: reads `out/rank<r>/phase`, where the worker publishes what it is doing for the
supervisor; while it says `timing ...`, the call returns an uninitialised tensor without
communicating, otherwise it computes honestly.
Why a naive judge is fooled: the phase it publishes tells checked calls from timed ones, and the
timed outputs are never looked at.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (the candidate's
process sees nothing that tells the phases apart, and sampled timed outputs are checked).
"""
import os

import torch
import torch.distributed as dist

_phase = os.path.join("out", f"rank{os.environ.get('RANK', '0')}", "phase")


def _timed():
    try:
        with open(_phase) as f:
            return f.read().startswith("timing")
    except OSError:
        return False


def solution(local_hidden_states, local_weight, variance_epsilon):
    if _timed():
        return torch.empty_like(local_hidden_states)
    x = local_hidden_states.float()
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
