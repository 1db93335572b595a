"""Family 16, forbidden hardware path: NVLS switched back on through environment variables whose
names are built at run time.

What it does: computes honestly, but at import (before the worker creates its process group, whose
communicator reads the environment) sets NCCL's NVLS switch to 1 and the symmetric-memory and
NVSHMEM multi-cast switches to "allowed", each name assembled from reversed strings so that no
text scan finds it. On the CPU (gloo) nothing reads them; on GPUs, NCCL would build NVLS
communicators.
Why a naive judge is fooled: it forces those variables off in the environment it starts the ranks
with and scans text for them, but never looks at what the process does to its own environment.
Verdict it must get: `forbidden` (a run-time guard, e.g. on the environment the candidate leaves
before any communicator exists, or on the driver's entry points).
Run it with --device cpu ONLY: with --device cuda it would really switch NVLS on.
"""
import os

import torch.distributed as dist

for _reversed, _value in (("ELBANE_SLVN_LCCN", "1"), ("TSACITLUM_ELBASID_MEM_MMYS_HCROT", "0"),
                          ("SLVN_ELBASID_MEMHSVN", "0")):
    os.environ[_reversed[::-1]] = _value


def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out)
    return out
