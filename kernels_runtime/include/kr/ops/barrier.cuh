#pragma once
/// Cross-rank barriers built on kr::signal_add / kr::wait_geq.
///
/// block_barrier(c, ch): block b of every rank meets block b of every other rank. All writes the
/// block made before the call (to any GPU) are visible to the peers' block b after it returns, and
/// vice versa. Every rank must launch the same grid and call the barriers in the same order;
/// gridDim.x < kr::max_blocks. Generations live in the heap, so the barrier is CUDA-graph safe.
///
/// grid_barrier(c, ch): every block of every rank meets. Needs all blocks of the grid co-resident
/// (size the grid with the occupancy API or a cooperative launch) and the same grid size at every
/// call on that channel.
#include "../types/comm.cuh"
#include "sync.cuh"

namespace kr {

/// Signal slot index used by grid_barrier (so block_barrier allows blocks [0, max_blocks - 1)).
inline constexpr int grid_slot_block = max_blocks - 1;

/// Threads [0, world) of the calling block exchange one signal each with the matching rank.
__device__ __forceinline__ void exchange_signals_(const comm& c, int ch, int block, std::uint64_t expected) {
  const int r = threadIdx.x;
  if (r < c.world && r != c.rank) {
    signal_add(c.slot(r, ch, c.rank, block));
    wait_geq(c.slot(c.rank, ch, r, block), expected, "kr barrier");
  }
}

__device__ inline void block_barrier(const comm& c, int ch = 0) {
  const int b = blockIdx.x;
  if (gridDim.x > unsigned(grid_slot_block)) {
    if (threadIdx.x == 0) printf("kr::block_barrier: grid of %d blocks, at most %d allowed\n", int(gridDim.x), grid_slot_block);
    __trap();
  }
  std::uint64_t* gen = c.generation(ch, b);
  const std::uint64_t expected = *gen + 1;
  __syncthreads();
  exchange_signals_(c, ch, b, expected);
  __syncthreads();
  if (threadIdx.x == 0) *gen = expected;
}

__device__ inline void grid_barrier(const comm& c, int ch = 0) {
  __shared__ std::uint64_t generation_sh;
  __syncthreads();
  const std::uint64_t blocks = gridDim.x;
  if (threadIdx.x == 0) {
    __threadfence_system();  // this block's writes, to any GPU, before its arrival
    const unsigned long long old =
        atomicAdd(reinterpret_cast<unsigned long long*>(c.grid_arrive(ch)), 1ull);
    generation_sh = old / blocks + 1;
  }
  __syncthreads();
  const std::uint64_t g = generation_sh;
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) wait_geq(c.grid_arrive(ch), g * blocks, "kr grid barrier (local blocks)");
    __syncthreads();
    exchange_signals_(c, ch, grid_slot_block, g);
    __syncthreads();
    if (threadIdx.x == 0) signal_set(c.grid_release(ch), g);
  }
  if (threadIdx.x == 0) wait_geq(c.grid_release(ch), g, "kr grid barrier (release)");
  __syncthreads();
}

}  // namespace kr
