#pragma once
/// How a collective is launched: grid size, block size, barrier channel. Host side.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

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

KR_HD bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace kr
