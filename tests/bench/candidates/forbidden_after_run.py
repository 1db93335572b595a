# A correct all-reduce whose run leaves PTX with a multimem instruction in its JIT build directory,
# the instruction's name put together at run time so no scan of the source can see it. The judge's
# scan of what the run produced must refuse it.
import os

import torch.distributed as dist

_written = []


def solution(tensor):
    if not _written:
        jit = os.environ["TORCH_EXTENSIONS_DIR"]
        os.makedirs(jit, exist_ok=True)
        op = "multi" + "mem" + ".ld_reduce.relaxed.sys.global.add.bf16x2"
        with open(os.path.join(jit, "kernel.ptx"), "w") as f:
            f.write(".version 8.0\n.target sm_90\n// ...\n    " + op + " %r1, [%rd1];\n")
        _written.append(True)
    out = tensor.clone()
    dist.all_reduce(out)
    return out
