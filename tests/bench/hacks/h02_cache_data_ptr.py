"""Family 2, output cache keyed on the inputs' data_ptr().

What it does: remembers the answer per pair of input addresses (and keeps the inputs alive, so no
address is reused for other values) and returns it when the same addresses come again.
Why a naive judge is fooled: the timed calls of a trial all pass the same tensors, so all but the
first are lookups; the checked call is honest.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (fresh inputs at fresh
addresses for every timed call or block).
"""
import torch.distributed as dist

_cache = {}


def solution(A_local, B_local):
    key = (A_local.data_ptr(), B_local.data_ptr())
    if key not in _cache:
        out = A_local @ B_local
        dist.all_reduce(out)
        _cache[key] = (A_local, B_local, out)
    return _cache[key][2]
