"""Expert solution for problem 16 (gemm_reducescatter) on kernels_runtime: cuBLAS writes the partial product straight
into the symmetric heap, then rank r pulls row block r of every rank's partial over NVLink and sums it (pull
reduce-scatter; row blocks are contiguous, so block r is elements r*M/W*N .. (r+1)*M/W*N - 1)."""
import torch
import torch.distributed as dist
import kr_torch  # kernels_runtime/python: on sys.path in `pkagent eval`

# Load (or build) the extension now, in the evaluator's import phase, not in the first timed call.
if torch.cuda.is_available():
    kr_torch.load()


def solution(A_local: torch.Tensor, B_local: torch.Tensor) -> torch.Tensor:
    heap = kr_torch.heap()
    world = dist.get_world_size()
    M, N = A_local.shape[0], B_local.shape[1]
    partial = heap.buffer("partial", (M, N), A_local.dtype)
    # The previous call's reduce-scatter ended with a cross-rank barrier: no peer still reads `partial`.
    torch.matmul(A_local, B_local, out=partial)
    out = torch.empty((M // world, N), dtype=partial.dtype, device=partial.device)
    return kr_torch.reduce_scatter(heap, partial, out)
