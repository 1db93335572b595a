"""Family 15, judge tampering through a shared resource (GPU only): the GPUs' memory taken at import.

What it does: at import, before anything else on its GPU, allocates all of the GPU's free memory but
1.5 GiB and keeps it; then computes honestly. A reference process set on the same GPUs finds no
memory for its buffers and fails, which a judge reports as its own internal error (exit 3) instead
of a verdict: a candidate that would fail can hide behind it. Nothing here touches multicast.
Why a naive judge is fooled: it runs the reference on the candidate's GPUs after the candidate could
claim them, and takes the reference's failure for its own.
Verdict it must get: not an internal error: `correct` at the honest speed (the reference's memory
is secured first, or the candidate's is capped) or a failure verdict naming the cause.
"""
import os

import torch
import torch.distributed as dist

_hog = []
if torch.cuda.is_available():
    _dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    _free, _ = torch.cuda.mem_get_info(_dev)
    _hog.append(torch.empty(max(0, _free - (3 << 29)), dtype=torch.uint8, device=_dev))


def solution(A_local, B_local):
    out = A_local @ B_local
    dist.all_reduce(out)
    return out
