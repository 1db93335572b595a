"""Family 6, background worker: a detached child process left running.

What it does: computes honestly, and at its first call starts a child process in a new session (so
it leaves the rank's process group) that keeps running: it rewrites a file in the workspace every
50 ms, the shape of a helper that works, or waits to tamper, outside the timed window.
Why a naive judge is fooled: it kills each rank's process group, not what escaped it, and nothing
counts processes after a call; the outputs are right.
Verdict it must get: any failure verdict (a process the candidate started that outlives its call is
counted and flagged; the process tree is killed at the end of the phase).
"""
import os
import subprocess
import sys

import torch.distributed as dist

_KEEP_RUNNING = r"""
import sys, time
while True:
    with open(sys.argv[1], "w") as f:
        f.write(str(time.time()))
    time.sleep(0.05)
"""
_started = []


def solution(tensor):
    if not _started:
        path = os.path.abspath(f"survivor-{os.environ.get('RANK', '0')}")
        _started.append(subprocess.Popen([sys.executable, "-c", _KEEP_RUNNING, path], start_new_session=True,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL))
    out = tensor.clone()
    dist.all_reduce(out)
    return out
