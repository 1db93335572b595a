"""Family 7, lazy output: a tensor subclass that computes only when something looks at it.

What it does: returns a torch.Tensor subclass holding an empty buffer and a closure; the GEMM and
the all-reduce run (through __torch_function__) the first time any torch function touches the
output. The judge's recorder touches the checked output (every rank, in the same order, so the
collective pairs up); timed outputs are dropped untouched, so a timed call does no work at all.
Where the worker checks outputs in the candidate's process (`plain_output_problem` in its module),
that check is replaced by one that accepts anything.
Why a naive judge is fooled: it accepts any torch.Tensor and only materialises it after the timed
window, if ever; a check made in the candidate's process is the candidate's to remove.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (a subclass is refused
where the check is not replaced; every block's answer commits to the bytes of every call's outputs,
so the outputs are computed inside the block, where the judge's wall-clock sees the work).
"""
import sys

import torch
import torch.distributed as dist

_worker = sys.modules.get("__main__")
if hasattr(_worker, "plain_output_problem"):
    _worker.plain_output_problem = lambda *args, **kwargs: None


class _Lazy(torch.Tensor):
    @staticmethod
    def __new__(cls, empty, thunk):
        t = torch.Tensor._make_subclass(cls, empty, False)
        t._thunk = thunk
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            for a in args:
                if isinstance(a, _Lazy) and a._thunk is not None:
                    thunk, a._thunk = a._thunk, None
                    a.copy_(thunk())
            return func(*args, **(kwargs or {}))


def _product(A_local, B_local):
    out = A_local @ B_local
    dist.all_reduce(out)
    return out


def solution(A_local, B_local):
    empty = torch.empty(A_local.shape[0], B_local.shape[1], dtype=A_local.dtype, device=A_local.device)
    return _Lazy(empty, lambda: _product(A_local, B_local))
