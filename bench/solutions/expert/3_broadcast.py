"""Expert solution for problem 3 (broadcast) on kernels_runtime: src copies into the symmetric heap, every rank pulls it."""
import sys
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "kernels_runtime" / "python"))
import kr_torch  # noqa: E402


def solution(tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
    heap = kr_torch.heap()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    if dist.get_rank() == src:
        x.copy_(tensor)
    out = torch.empty_like(tensor)
    return kr_torch.broadcast(heap, x, out, src)
