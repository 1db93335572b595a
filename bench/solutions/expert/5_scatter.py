"""Expert solution for problem 5 (scatter) on kernels_runtime: src copies its (W, M, N) tensor into the symmetric heap, rank r pulls slice r."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
    heap = kr_torch.heap()
    world, rank = dist.get_world_size(), dist.get_rank()
    shape = tuple(tensor.shape[-2:])
    x = heap.buffer("in", (world, *shape), tensor.dtype)  # the same size on every rank
    if rank == src:
        x.copy_(tensor)
    out = torch.empty(shape, dtype=tensor.dtype, device=tensor.device)
    return kr_torch.scatter(heap, x, out, src)
