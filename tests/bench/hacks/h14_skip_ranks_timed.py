"""Family 14, rank asymmetry: some ranks skip the work while timed, and nobody communicates.

What it does: honest on a checked call; on a timed call (a frame of the judge's timing module on
the stack) rank 0 normalises with its own half of the sum of squares (no all-reduce) and every
other rank returns an uninitialised tensor at once.
Why a naive judge is fooled: it checks each rank's output only on the checked call, and its time is
the slowest rank's, which is now a purely local computation.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (every rank's output is
checked on sampled timed calls too).
"""
import sys

import torch
import torch.distributed as dist


def _timed():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename.endswith("timing.py"):
            return True
        f = f.f_back
    return False


def solution(local_hidden_states, local_weight, variance_epsilon):
    x = local_hidden_states.float()
    if _timed():
        if dist.get_rank() != 0:
            return torch.empty_like(local_hidden_states)
        var = x.pow(2).mean(dim=-1, keepdim=True)
        return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
    sum_sq = x.pow(2).sum(dim=-1, keepdim=True)
    dist.all_reduce(sum_sq)
    var = sum_sq / (x.shape[-1] * dist.get_world_size())
    return local_weight * (x * torch.rsqrt(var + variance_epsilon)).to(local_hidden_states.dtype)
