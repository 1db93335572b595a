"""Family 2, output cache keyed on the input's shape and dtype.

What it does: the first call for a (shape, dtype) does the all-reduce; every later call with the
same shape and dtype returns that first result.
Why a naive judge is fooled: problem 1's inputs hold the same values in every trial and every timed
call, so the stale answer is still right, and a timed call is a dictionary lookup.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (new values for every
trial and timed call, and sampled checks of timed outputs, make the stale answer wrong).
"""
import torch.distributed as dist

_cache = {}


def solution(tensor):
    key = (tuple(tensor.shape), tensor.dtype)
    if key not in _cache:
        out = tensor.clone()
        dist.all_reduce(out)
        _cache[key] = out
    return _cache[key]
