"""Expert solution for problem 8 (alltoall) on kernels_runtime: copy into the symmetric heap, rank r pulls slice r of every rank."""
import torch
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(tensor: torch.Tensor) -> torch.Tensor:
    heap = kr_torch.heap()
    x = heap.buffer("in", tensor.shape, tensor.dtype)
    x.copy_(tensor)
    out = torch.empty_like(tensor)
    return kr_torch.all_to_all(heap, x, out)
