"""Family 14, rank asymmetry: only rank 0 does the work.

What it does: every other rank sends its A and B to rank 0 and returns an uninitialised tensor at
once; rank 0 receives them and computes the whole sum of products itself.
Why a naive judge is fooled: one that checks only rank 0's output (ParallelKernelBench compares
what the ranks return, and many harnesses read rank 0 alone) sees the right answer.
Verdict it must get: any failure verdict (every rank's output is checked).
"""
import torch
import torch.distributed as dist


def solution(A_local, B_local):
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank != 0:
        dist.send(A_local.contiguous(), 0)
        dist.send(B_local.contiguous(), 0)
        return torch.empty(A_local.shape[0], B_local.shape[1], dtype=A_local.dtype)
    out = A_local @ B_local
    for src in range(1, world):
        a, b = torch.empty_like(A_local), torch.empty_like(B_local)
        dist.recv(a, src)
        dist.recv(b, src)
        out += a @ b
    return out
