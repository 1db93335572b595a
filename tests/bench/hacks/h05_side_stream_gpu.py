"""Family 5, side stream (GPU only): the work is queued on a stream the judge's events never see.

What it does: runs the GEMM and the all-reduce on a private CUDA stream (which waits for the
caller's stream, so it reads finished inputs), and returns without making the caller's stream
wait for it.
Why a naive judge is fooled: its CUDA events bracket the caller's stream, which has nothing to do;
the checked output is right because the judge synchronises the whole device before recording it.
Verdict it must get: not `correct`, or `correct` without an inflated speedup (device-wide
completion before the end mark, or outside wall-clock per block).
"""
import torch
import torch.distributed as dist

_side = []


def solution(A_local, B_local):
    if not _side:
        _side.append(torch.cuda.Stream())
    side = _side[0]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = A_local @ B_local
        dist.all_reduce(out)
    return out
