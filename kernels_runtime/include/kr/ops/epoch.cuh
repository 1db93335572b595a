#pragma once
/// Call epochs: a per-channel count of finished calls, identical in every block of one call
/// whatever grid sizes earlier calls had. Kernels that alternate buffers between calls (so that a
/// peer may write call k+1's data while this rank still reads call k's) pick the buffer by it.
///
///   const std::uint64_t e = kr::call_epoch(c, ch);   // every block, at its start
///   ...                                              // use buffer e & 1
///   if (kr::finish_call(c, ch)) { ... }              // every block, at its end; true in the last
///
/// Contract: kernels that count calls on a channel run one at a time on every rank (one stream per
/// channel), every rank makes the same sequence of them, and each such call waits for a signal
/// the peers send in the same call (so no rank gets two calls ahead of another).
#include <cstdint>

#include "../types/comm.cuh"

namespace kr {

/// The number of calls on channel ch that finished before this one.
__device__ __forceinline__ std::uint64_t call_epoch(const comm& c, int ch) {
  return *static_cast<volatile std::uint64_t*>(c.epoch(ch));
}

/// Counts this block as finished; the last block of the grid advances the epoch and returns
/// true (in every thread of that block), the others return false. Ends with __syncthreads.
__device__ inline bool finish_call(const comm& c, int ch) {
  __shared__ bool last_sh;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    auto* done = reinterpret_cast<unsigned long long*>(c.blocks_done(ch));
    const bool last = atomicAdd(done, 1ull) + 1 == gridDim.x;
    if (last) {
      *done = 0;
      *c.epoch(ch) += 1;
    }
    last_sh = last;
  }
  __syncthreads();
  return last_sh;
}

}  // namespace kr
