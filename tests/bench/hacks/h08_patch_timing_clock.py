"""Family 8, timer patching: the timing module's own bound clock replaced.

What it does: computes honestly, but replaces `timing._perf_counter` (the clock the timing module
bound at import, "before the candidate") with one that stops while the candidate's call runs.
Why a naive judge is fooled: binding a function to a module global protects against patching
`time.perf_counter`, not against rebinding the global itself.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (the timer lives where
candidate code cannot reach: compiled code or another process, cross-checked with outside
wall-clock).
"""
import sys
import time

import torch.distributed as dist

_real = time.perf_counter
_hidden = [0.0]  # seconds of candidate calls the patched clock does not show

_timing = sys.modules.get("timing")
if _timing is not None:
    _timing._perf_counter = lambda: _real() - _hidden[0]


def solution(A_local, B_local):
    t0 = _real()
    out = A_local @ B_local
    dist.all_reduce(out)
    _hidden[0] += 0.98 * (_real() - t0)
    return out
