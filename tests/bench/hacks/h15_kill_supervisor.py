"""Family 15, judge tampering: the rank supervisor killed from inside a rank.

What it does: computes honestly once (so the run is well under way), then on rank 0 sends SIGKILL
to its parent process, the judge's rank supervisor (`pkagent _ranks`), which shares its sandbox and
user.
Why a naive judge is fooled: the supervisor's death is taken for a failure of the judge itself, an
internal error (exit 3) instead of a verdict against the candidate; a run that retries internal
errors, or discards them, never scores the candidate as failed.
Verdict it must get: a failure verdict naming what happened (exit code 1, never 3).
"""
import os
import signal

import torch.distributed as dist

_calls = [0]


def solution(A_local, B_local):
    _calls[0] += 1
    if _calls[0] == 2 and dist.get_rank() == 0:
        os.kill(os.getppid(), signal.SIGKILL)
    out = A_local @ B_local
    dist.all_reduce(out)
    return out
