#pragma once
/// All-gather, SM-driven pull: out[r*n + i] = rank r's in[i]. `in` must be in the heap; `out` can
/// be any memory of this GPU. Entry barrier (inputs ready), copy, exit barrier (my input is free).
#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

static __global__ void all_gather_kernel(comm c, const char* in, char* out, std::size_t bytes, int ch) {
  block_barrier(c, ch);
  for (int k = 0; k < c.world; ++k) {
    const int r = (c.rank + k) % c.world;  // own block first, then the peers, staggered
    copy_bytes(out + std::size_t(r) * bytes, c.peer(in, r), bytes);
  }
  block_barrier(c, ch);
}

/// bytes: the size of each rank's input.
inline cudaError_t all_gather(const comm& c, const void* in, void* out, std::size_t bytes, cudaStream_t stream,
                              launch_params p = {}) {
  all_gather_kernel<<<grid_blocks(p, bytes / 16), p.threads, 0, stream>>>(
      c, static_cast<const char*>(in), static_cast<char*>(out), bytes, p.channel);
  return cudaGetLastError();
}

}  // namespace kr
