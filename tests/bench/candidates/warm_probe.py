# Correct all-reduce, but only in an interpreter nothing of an earlier candidate reached: with any
# trace of warm_polluter.py (globals, patched torch, its thread, its environment) it answers wrong.
import builtins
import os
import sys
import threading

import torch
import torch.distributed as dist


def _traces():
    found = []
    if hasattr(builtins, "pk_polluted"):
        found.append("builtins")
    if "pk_polluted_module" in sys.modules:
        found.append("sys.modules")
    if getattr(dist.all_reduce, "pk_polluted", False):
        found.append("torch.distributed.all_reduce")
    if hasattr(torch, "pk_polluted"):
        found.append("torch")
    if os.environ.get("PK_POLLUTED"):
        found.append("environment")
    if any(t.name == "pk_polluter" for t in threading.enumerate()):
        found.append("thread")
    return found


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    traces = _traces()
    if traces:
        print(f"warm_probe: traces of an earlier candidate: {traces}", file=sys.stderr)
        out.add_(1)
    return out
