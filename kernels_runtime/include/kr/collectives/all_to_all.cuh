#pragma once
/// All-to-all, SM-driven pull. `in` must be in the heap, `out` anywhere on this GPU.
///
/// equal splits: block s of my output (bytes each) = block `rank` of rank s's input.
/// variable splits: `splits` is a world x world row-major matrix in device memory, splits[s][d] =
///   elements rank s sends to rank d (the same matrix on every rank). Rank s's input holds its
///   blocks for d = 0..world-1 back to back; my output holds the blocks from s = 0..world-1 back to
///   back (the layout of torch.distributed.all_to_all_single with split sizes).
#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

static __global__ void all_to_all_kernel(comm c, const char* in, char* out, std::size_t bytes, int ch) {
  block_barrier(c, ch);
  for (int k = 0; k < c.world; ++k) {
    const int s = (c.rank + k) % c.world;
    copy_bytes(out + std::size_t(s) * bytes, c.peer(in, s) + std::size_t(c.rank) * bytes, bytes);
  }
  block_barrier(c, ch);
}

static __global__ void all_to_all_v_kernel(comm c, const char* in, char* out, const std::int64_t* splits,
                                    std::size_t elem_bytes, int ch) {
  block_barrier(c, ch);
  const int W = c.world, d = c.rank;
  std::size_t recv_off = 0;
  for (int s = 0; s < W; ++s) {
    std::size_t send_off = 0;
    for (int j = 0; j < d; ++j) send_off += std::size_t(splits[s * W + j]);
    const std::size_t count = std::size_t(splits[s * W + d]);
    copy_bytes(out + recv_off * elem_bytes, c.peer(in, s) + send_off * elem_bytes, count * elem_bytes);
    recv_off += count;
  }
  block_barrier(c, ch);
}

/// bytes: the size of one block (each rank's input and output hold world blocks).
inline cudaError_t all_to_all(const comm& c, const void* in, void* out, std::size_t bytes, cudaStream_t stream,
                              launch_params p = {}) {
  all_to_all_kernel<<<grid_blocks(p, bytes / 16), p.threads, 0, stream>>>(
      c, static_cast<const char*>(in), static_cast<char*>(out), bytes, p.channel);
  return cudaGetLastError();
}

/// max_block_bytes: the largest block, to size the grid.
inline cudaError_t all_to_all_v(const comm& c, const void* in, void* out, const std::int64_t* splits_device,
                                std::size_t elem_bytes, std::size_t max_block_bytes, cudaStream_t stream,
                                launch_params p = {}) {
  all_to_all_v_kernel<<<grid_blocks(p, max_block_bytes / 16), p.threads, 0, stream>>>(
      c, static_cast<const char*>(in), static_cast<char*>(out), splits_device, elem_bytes, p.channel);
  return cudaGetLastError();
}

}  // namespace kr
