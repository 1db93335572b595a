#pragma once
/// All-reduce by push, SM-driven, for small and medium messages (up to a few tens of MB).
///
/// Each rank stores its input into a scratch slot in every peer's heap, then block b meets block b
/// of every peer (one block_barrier: "my pushes to you have landed"), then each rank sums its own
/// input and the slots it received, locally. One cross-GPU handshake per call instead of the two
/// of the pull versions (entry: inputs ready; exit: inputs no longer read): the input is only ever
/// read by its owner, and the scratch alternates between two buffers by call epoch, so a peer may
/// already push call k+1 while this rank still sums call k.
///
/// `in` and `out` can be any memory of this GPU (in place too); `scratch` must be in the heap, with
/// all_reduce_push_scratch_elems(world, n) elements, and used by nothing else. Every rank moves
/// (world-1) * n elements out over its links: for many ranks prefer two-shot. Sums run in rank
/// order in float: bit-identical on every rank and equal to the one-shot and two-shot results.
#include "../ops/barrier.cuh"
#include "../ops/epoch.cuh"
#include "launch.cuh"

namespace kr {

/// Index of sender `src`'s slot in receiver `dst`'s scratch (world-1 slots, none for itself).
KR_HD int push_slot(int src, int dst) { return src < dst ? src : src - 1; }

/// Elements per scratch slot for n elements of T: n rounded up to whole 16-byte packs.
template <reducible T>
KR_HD std::size_t push_slot_elems(std::size_t n) {
  constexpr std::size_t E = pack_traits<T>::elems;
  return (n + E - 1) / E * E;
}

template <reducible T>
inline std::size_t all_reduce_push_scratch_elems(int world, std::size_t n) {
  return 2 * std::size_t(world > 1 ? world - 1 : 0) * push_slot_elems<T>(n);
}

/// dst[e] = src[e] for elements e in [e0, e1) (e0 a multiple of a pack), by `step` threads:
/// 16-byte packs when vec, then element by element.
template <reducible T>
__device__ void push_copy_elems(T* dst, const T* src, std::size_t e0, std::size_t e1, bool vec, unsigned lane,
                                unsigned step) {
  constexpr std::size_t E = pack_traits<T>::elems;
  std::size_t i = e0;
  if (vec) {
    strided_copy_packs(reinterpret_cast<uint4*>(dst), reinterpret_cast<const uint4*>(src), e0 / E, e1 / E, lane, step);
    i = e1 / E * E;
  }
  for (i += lane; i < e1; i += step) dst[i] = src[i];
}

/// out[e] = sum over ranks in rank order of source(r)[e], for e in [e0, e1), by `step` threads.
template <reducible T, int U = block_unroll, class Source>
__device__ void push_sum_elems(const Source& source, int W, T* out, std::size_t e0, std::size_t e1, bool vec,
                               unsigned lane, unsigned step) {
  constexpr std::size_t E = pack_traits<T>::elems;
  std::size_t i = e0;
  if (vec) {
    strided_sum_packs<T, U>([&](int r) { return reinterpret_cast<const uint4*>(source(r)); }, W,
                         reinterpret_cast<uint4*>(out), e0 / E, e1 / E, lane, step);
    i = e1 / E * E;
  }
  for (i += lane; i < e1; i += step) {
    float acc = 0.f;
    for (int r = 0; r < W; ++r) acc += pack_traits<T>::to_float(source(r)[i]);
    out[i] = pack_traits<T>::from_float(acc);
  }
}

/// What one call of the push kernel works on, the same on every rank: block b owns a contiguous
/// range of whole packs (the last block also the elements past the last pack); what block b
/// pushes is exactly what the peers' block b sums. How wide the accesses are is a local choice
/// (alignment of in and out) and does not change the split.
template <reducible T>
struct push_call {
  T* buf;             ///< this call's half of my scratch (peers' by c.peer)
  std::size_t slot;   ///< elements per sender slot
  block_range br;     ///< this block's packs
  std::size_t n;
  bool vec_in, vec_out;

  __device__ push_call(const comm& c, const T* in, T* out, T* scratch, std::size_t n_, int ch)
      : slot(push_slot_elems<T>(n_)), br(n_ / pack_traits<T>::elems), n(n_) {
    buf = scratch + (call_epoch(c, ch) & 1) * std::size_t(c.world - 1) * slot;
    vec_in = aligned16(in) && aligned16(scratch);
    vec_out = vec_in && aligned16(out);
  }
  /// This block's elements [e0, e1).
  __device__ void bounds(std::size_t& e0, std::size_t& e1) const {
    e0 = br.first * pack_traits<T>::elems;
    e1 = blockIdx.x == gridDim.x - 1 ? n : br.last * pack_traits<T>::elems;
  }
  /// My slot in rank d's buffer.
  __device__ T* peer_slot(const comm& c, int d) const {
    return c.peer(buf, d) + std::size_t(push_slot(c.rank, d)) * slot;
  }
  /// Where rank r's contribution is on this rank: my input, or r's slot in my buffer.
  __device__ const T* source(const comm& c, const T* in, int r) const {
    return r == c.rank ? in : buf + std::size_t(push_slot(r, c.rank)) * slot;
  }
};

template <reducible T>
__global__ void __launch_bounds__(512, 2)
    all_reduce_push_kernel(comm c, const T* in, T* out, T* scratch, std::size_t n, int ch) {
  const push_call<T> pc(c, in, out, scratch, n, ch);
  std::size_t e0, e1;
  pc.bounds(e0, e1);
  for (int k = 1; k < c.world; ++k)  // push: my input into my slot of every peer (staggered)
    push_copy_elems(pc.peer_slot(c, (c.rank + k) % c.world), in, e0, e1, pc.vec_in, threadIdx.x, blockDim.x);
  block_barrier(c, ch);  // every peer's block b has pushed the same elements into my buffer
  push_sum_elems<T>([&](int r) { return pc.source(c, in, r); }, c.world, out, e0, e1, pc.vec_out, threadIdx.x,
                    blockDim.x);
  finish_call(c, ch);
}

/// One-handshake push all-reduce (see the top of this file). Same launch_params on every rank;
/// p.threads at most 512.
template <reducible T>
cudaError_t all_reduce_push(const comm& c, const T* in, T* out, T* scratch, std::size_t n, cudaStream_t stream,
                            launch_params p = {}) {
  if (p.threads > 512) return cudaErrorInvalidConfiguration;  // __launch_bounds__(512, 2)
  const int blocks = grid_blocks(p, n / pack_traits<T>::elems);
  all_reduce_push_kernel<T><<<blocks, p.threads, 0, stream>>>(c, in, out, scratch, n, p.channel);
  return cudaGetLastError();
}

}  // namespace kr
