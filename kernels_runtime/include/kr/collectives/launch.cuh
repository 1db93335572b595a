#pragma once
/// How a collective is launched: grid size, block size, barrier channel. Host side.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../types/comm.cuh"
#include "blocks.cuh"

namespace kr {

struct launch_params {
  int blocks = 0;     ///< 0: enough blocks for the data, at most max_blocks_auto
  int threads = 512;
  int channel = 0;    ///< barrier channel, [0, kr::channels)
  int max_blocks_auto = 264;
  /// All-reduce and reduce-scatter: 16-byte packs per thread and source in flight, 0
  /// (the default: 2, one source at a time), 4 or 8 (all sources at once; 8 needs threads <= 256).
  int unroll = 0;
};

/// Blocks for n_packs 16-byte packs: one pass of pack_unroll packs per thread, capped.
inline int grid_blocks(const launch_params& p, std::size_t n_packs) {
  if (p.blocks > 0) return std::min(p.blocks, max_blocks - 1);
  const std::size_t per_block = std::size_t(p.threads) * pack_unroll;
  const std::size_t want = (n_packs + per_block - 1) / per_block;
  return int(std::clamp<std::size_t>(want, 1, std::size_t(std::min(p.max_blocks_auto, max_blocks - 1))));
}

/// Launches a kernel templated on its unroll factor U with the one p.unroll picks at run time:
/// calls launch(std::integral_constant<int, U>{}) for U = 8 or 4, else for U = 0 (the default
/// shape), then returns the launch's error. Refuses unroll 8 with more than 256 threads (too many
/// registers per thread for the block) before launching anything.
template <class Launch>
cudaError_t launch_unrolled(const launch_params& p, Launch&& launch) {
  if (p.unroll == 8 && p.threads > 256) return cudaErrorInvalidConfiguration;
  switch (p.unroll) {
    case 8: launch(std::integral_constant<int, 8>{}); break;
    case 4: launch(std::integral_constant<int, 4>{}); break;
    default: launch(std::integral_constant<int, 0>{}); break;
  }
  return cudaGetLastError();
}

KR_HD bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace kr
