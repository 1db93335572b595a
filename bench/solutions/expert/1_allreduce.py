"""Expert solution for problem 1 (allreduce) on kernels_runtime: copy into the symmetric heap, one-shot all-reduce (each rank reads every peer's copy over NVLink and sums in rank order)."""
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
    return kr_torch.all_reduce(heap, x, out)
