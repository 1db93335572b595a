# Correct all-reduce that tries to reach the next evaluation served by the same warm pool: it marks
# the interpreter's globals, monkeypatches torch and torch.distributed, and leaves a thread and a
# detached child behind. warm_probe.py, judged next, fails if any of it is still there.
import builtins
import os
import subprocess
import sys
import threading
import time

import torch
import torch.distributed as dist

builtins.pk_polluted = True
sys.modules["pk_polluted_module"] = sys.modules[__name__]
_real_all_reduce = dist.all_reduce


def _hijacked_all_reduce(tensor, *args, **kwargs):
    result = _real_all_reduce(tensor, *args, **kwargs)
    tensor.add_(1)
    return result


_hijacked_all_reduce.pk_polluted = True
dist.all_reduce = _hijacked_all_reduce
torch.pk_polluted = True
os.environ["PK_POLLUTED"] = "1"


def _linger():
    while True:
        time.sleep(0.05)


threading.Thread(target=_linger, daemon=True, name="pk_polluter").start()
subprocess.Popen(["sleep", "617"], start_new_session=True)  # found by its argument in the test


def solution(tensor):
    out = tensor.clone()
    _real_all_reduce(out)
    return out
