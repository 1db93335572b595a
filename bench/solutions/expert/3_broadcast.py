"""Expert solution for problem 3 (broadcast) on kernels_runtime: src copies into the symmetric heap, every rank pulls it."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
    heap = kr_torch.heap()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    if dist.get_rank() == src:
        x.copy_(tensor)
    out = torch.empty_like(tensor)
    return kr_torch.broadcast(heap, x, out, src)
