"""Family 13, input mutation only while timed.

What it does: a call made from the judge's timing loop (a frame of its timing module on the stack),
or a repeated call on the same input object, all-reduces its input in place and returns it, saving
the copy; any other call (the checked one of a naive judge) reduces a copy, as the reference does.
Why a naive judge is fooled: it checks that inputs are unchanged only after the checked call; the
timed calls' inputs are never looked at.
Verdict it must get: any failure verdict (inputs compared after sampled timed calls too, which
cannot be told from checked ones).
"""
import sys

import torch.distributed as dist

_seen = {}  # id(input) -> input, kept so that no id is reused


def _timed():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename.endswith("timing.py"):
            return True
        f = f.f_back
    return False


def solution(tensor):
    if id(tensor) in _seen or _timed():
        dist.all_reduce(tensor)
        return tensor
    _seen[id(tensor)] = tensor
    out = tensor.clone()
    dist.all_reduce(out)
    return out
