"""Expert solution for problem 2 (allgather) on kernels_runtime: copy into the symmetric heap, every rank pulls every peer's block."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor) -> torch.Tensor:
    heap = kr_torch.heap()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    x.copy_(tensor)
    out = torch.empty((dist.get_world_size(), *tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return kr_torch.all_gather(heap, x, out)
