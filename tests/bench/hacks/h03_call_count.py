"""Family 3, phase detection by counting calls.

What it does: counts the calls made with each set of input objects. The first call on new inputs
is the one a naive judge checks, so it is honest; every later call with the same inputs is taken
to be a timed repeat and returns an uninitialised tensor.
Why a naive judge is fooled: it checks one call per trial and times many more on the same inputs
without looking at their outputs.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (timed calls get fresh
inputs and a random sample of them is checked, so a checked call cannot be told from a timed one).
"""
import torch
import torch.distributed as dist

_calls = {}  # (id(A), id(B)) -> [A, B, calls]; the inputs are kept so that no id is reused


def solution(A_local, B_local):
    entry = _calls.setdefault((id(A_local), id(B_local)), [A_local, B_local, 0])
    entry[2] += 1
    if entry[2] > 1:
        return torch.empty(A_local.shape[0], B_local.shape[1], dtype=A_local.dtype)
    out = A_local @ B_local
    dist.all_reduce(out)
    return out
