"""Family 11, precision downgrade beyond the tolerance: the GEMM's inputs rounded to fp8.

What it does: rounds A and B to float8 (e4m3, as an fp8 tensor-core GEMM would read them), then
multiplies and all-reduces.
Why a naive judge is fooled: a judge with a loose tolerance, or one that compares a few elements,
takes the ~6% per-element error; ours compares every element at atol = rtol = 1e-2.
Verdict it must get: any failure verdict (`mismatch`).
"""
import torch
import torch.distributed as dist


def _fp8(t):
    return t.to(torch.float8_e4m3fn).to(t.dtype)


def solution(A_local, B_local):
    out = _fp8(A_local) @ _fp8(B_local)
    dist.all_reduce(out)
    return out
