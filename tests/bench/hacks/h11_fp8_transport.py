"""Family 11, precision downgrade beyond the tolerance: the all-reduce sent in fp8.

What it does: casts its tensor to float8 (e4m3), all-gathers the fp8 bytes (half the traffic of
bf16) and sums the upcast parts.
Why a naive judge is fooled: problem 1's inputs are small integers (rank + 1), which fp8 holds
exactly, so the sum is exact; on inputs with real mantissas fp8's 3 bits lose far more than the
1e-2 tolerance.
Verdict it must get: any failure verdict (`mismatch` on inputs whose values use bf16's precision).
"""
import torch
import torch.distributed as dist


def solution(tensor):
    small = tensor.to(torch.float8_e4m3fn).view(torch.uint8)
    parts = [torch.empty_like(small) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, small)
    total = parts[0].view(torch.float8_e4m3fn).float()
    for p in parts[1:]:
        total += p.view(torch.float8_e4m3fn).float()
    return total.to(tensor.dtype)
