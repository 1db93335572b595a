"""Expert solution for problem 7 (reducescatter) on kernels_runtime: copy into the symmetric heap, rank r pulls row block r from every rank and sums in rank order."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor) -> torch.Tensor:
    heap = kr_torch.heap()
    world = dist.get_world_size()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    x.copy_(tensor)
    out = torch.empty((tensor.shape[0] // world, *tensor.shape[1:]), dtype=tensor.dtype, device=tensor.device)
    return kr_torch.reduce_scatter(heap, x, out)
