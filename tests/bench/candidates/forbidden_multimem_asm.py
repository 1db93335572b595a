# An all-reduce through NVLink multicast: an inline-PTX multimem load-reduce in a load_inline kernel.
# The judge must refuse it from its source, before it runs: its module-level code raises, which
# would turn into a compile_error verdict if it ever ran.
import torch
from torch.utils.cpp_extension import load_inline

raise RuntimeError("this candidate must never be run: the judge refuses it from its source")

CUDA_SRC = r"""
__global__ void mc_allreduce(const float* mc_in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v;
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.f32 %0, [%1];" : "=f"(v) : "l"(mc_in + i) : "memory");
    out[i] = v;
  }
}
"""


def solution(tensor):
    ext = load_inline("mc_allreduce", cpp_sources="", cuda_sources=CUDA_SRC)
    return ext.run(tensor)
