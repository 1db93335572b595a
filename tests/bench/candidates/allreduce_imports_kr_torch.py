# A correct all-reduce that imports kr_torch the way docs/kernels_runtime.md says, and checks that
# the binding's headers are there to compile against (the judge offers both inside the sandbox).
import os

import kr_torch
import torch.distributed as dist

if not os.path.isfile(os.path.join(kr_torch.include_dir(), "kr", "kr.cuh")):
    raise RuntimeError(f"kernels_runtime headers missing under {kr_torch.include_dir()}")


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out
