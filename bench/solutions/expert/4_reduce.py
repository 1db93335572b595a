"""Expert solution for problem 4 (reduce) on kernels_runtime: copy into the symmetric heap, dst pulls and sums every rank's copy; the others return their input."""
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
        kr_torch.reduce(heap, x, x, dst)  # takes part in the barriers, writes nothing here
        return tensor
    out = torch.empty_like(tensor)
    return kr_torch.reduce(heap, x, out, dst)
