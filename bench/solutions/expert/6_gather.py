"""Expert solution for problem 6 (gather) on kernels_runtime: copy into the symmetric heap, dst pulls every rank's block; the others return their input."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor, dst: int = 0) -> torch.Tensor:
    heap = kr_torch.heap()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    x.copy_(tensor)
    if dist.get_rank() != dst:
        kr_torch.gather(heap, x, x, dst)  # takes part in the barriers, writes nothing here
        return tensor
    out = torch.empty((dist.get_world_size(), *tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return kr_torch.gather(heap, x, out, dst)
