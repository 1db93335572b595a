"""Expert solution for problem 13 (gemm_allreduce) on kernels_runtime: cuBLAS writes the partial product straight into
the symmetric heap (no staging copy), then a one-shot all-reduce sums it over NVLink (float sums in rank order,
one rounding, as NCCL does at two ranks)."""
import torch
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(A_local: torch.Tensor, B_local: torch.Tensor) -> torch.Tensor:
    heap = kr_torch.heap()
    partial = heap.buffer("partial", (A_local.shape[0], B_local.shape[1]), A_local.dtype)
    # The same cuBLAS call as the reference's A @ B, so the partial products are bit-identical to its.
    # The previous call's all-reduce ended with a cross-rank barrier: no peer still reads `partial`.
    torch.matmul(A_local, B_local, out=partial)
    return kr_torch.all_reduce(heap, partial, torch.empty_like(partial))
