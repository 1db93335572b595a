#pragma once
/// Grid- and block-stride building blocks the collectives are made of. Every function is safe to
/// call from every thread of the grid (no barriers inside).
#include <cstddef>
#include <cstdint>

#include "../ops/vec.cuh"
#include "../types/comm.cuh"

namespace kr {

/// 16-byte packs each thread moves per loop trip (loads in flight per source).
inline constexpr int pack_unroll = 2;

struct grid_stride {
  std::size_t first, step;
  __device__ grid_stride()
      : first(std::size_t(blockIdx.x) * blockDim.x * pack_unroll + threadIdx.x),
        step(std::size_t(gridDim.x) * blockDim.x * pack_unroll) {}
};

/// out[i] = sum over ranks r = 0..world-1, in that order, of c.peer(src, r)[i], for packs
/// [0, n_packs). Sums in float and rounds once, so every rank computes bit-identical results.
/// src points into this rank's heap; out may be anywhere this GPU can write (local or peer). With
/// to_all_ranks, out must point into this rank's heap and each result goes to every rank's out.
template <reducible T, bool to_all_ranks = false>
__device__ void reduce_packs(const comm& c, const uint4* src, uint4* out, std::size_t n_packs) {
  const grid_stride gs;
  const std::size_t bdim = blockDim.x;
  for (std::size_t i = gs.first; i < n_packs; i += gs.step) {
    acc_v4<T> acc[pack_unroll];
    uint4 a[pack_unroll], b[pack_unroll];
    const uint4* s0 = c.peer(src, 0);
#pragma unroll
    for (int u = 0; u < pack_unroll; ++u)
      if (i + u * bdim < n_packs) a[u] = ld_v4(s0 + i + u * bdim);
#pragma unroll
    for (int u = 0; u < pack_unroll; ++u) acc[u].set(a[u]);
    int r = 1;
    for (; r + 1 < c.world; r += 2) {  // two sources at a time keeps more loads in flight
      const uint4* sa = c.peer(src, r);
      const uint4* sb = c.peer(src, r + 1);
#pragma unroll
      for (int u = 0; u < pack_unroll; ++u)
        if (i + u * bdim < n_packs) {
          a[u] = ld_v4(sa + i + u * bdim);
          b[u] = ld_v4(sb + i + u * bdim);
        }
#pragma unroll
      for (int u = 0; u < pack_unroll; ++u) {
        acc[u].add(a[u]);
        acc[u].add(b[u]);
      }
    }
    if (r < c.world) {
      const uint4* sa = c.peer(src, r);
#pragma unroll
      for (int u = 0; u < pack_unroll; ++u)
        if (i + u * bdim < n_packs) a[u] = ld_v4(sa + i + u * bdim);
#pragma unroll
      for (int u = 0; u < pack_unroll; ++u) acc[u].add(a[u]);
    }
    if constexpr (to_all_ranks) {
      for (int d = 0; d < c.world; ++d) {
        uint4* o = c.peer(out, (c.rank + d) % c.world);  // stagger destinations across ranks
#pragma unroll
        for (int u = 0; u < pack_unroll; ++u)
          if (i + u * bdim < n_packs) st_v4(o + i + u * bdim, acc[u].pack());
      }
    } else {
#pragma unroll
      for (int u = 0; u < pack_unroll; ++u)
        if (i + u * bdim < n_packs) st_v4(out + i + u * bdim, acc[u].pack());
    }
  }
}

/// The same sum for a scalar tail (elements [first, n)); one thread per element.
template <reducible T>
__device__ void reduce_tail(const comm& c, const T* src, T* out, std::size_t first, std::size_t n) {
  for (std::size_t i = first + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float acc = 0.f;
    for (int r = 0; r < c.world; ++r) acc += pack_traits<T>::to_float(c.peer(src, r)[i]);
    out[i] = pack_traits<T>::from_float(acc);
  }
}

/// dst[i] = src[i] for packs i = first + k * outer + u * inner (u < U) below last, U loads in flight
/// before the stores; either side local or a peer's. The loop both copy layouts below share.
template <int U>
__device__ inline void unrolled_copy_packs(uint4* dst, const uint4* src, std::size_t first, std::size_t last,
                                           std::size_t inner, std::size_t outer) {
  for (std::size_t i = first; i < last; i += outer) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * inner < last) v[u] = ld_v4(src + i + u * inner);
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * inner < last) st_v4(dst + i + u * inner, v[u]);
  }
}

/// dst[i] = src[i] for packs [0, n_packs), grid-strided; either side may be a peer address.
__device__ inline void copy_packs(uint4* dst, const uint4* src, std::size_t n_packs) {
  const grid_stride gs;
  unrolled_copy_packs<pack_unroll>(dst, src, gs.first, n_packs, blockDim.x, gs.step);
}

/// Copies `bytes` bytes: 16-byte packs where both sides are 16-byte aligned, bytes otherwise.
__device__ inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  std::size_t done = 0;
  if (((reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s)) & 15u) == 0) {
    done = bytes / 16 * 16;
    copy_packs(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), bytes / 16);
  }
  for (std::size_t i = done + std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += std::size_t(gridDim.x) * blockDim.x)
    d[i] = s[i];
}


/// This block's contiguous share [first, last) of n items, split the same way on every rank that
/// launches the same grid: what a block pushes to a peer is exactly what the peer's block of the
/// same index reduces after a block_barrier.
struct block_range {
  std::size_t first, last;
  __device__ explicit block_range(std::size_t n) {
    const std::size_t per = (n + gridDim.x - 1) / gridDim.x;
    first = std::size_t(blockIdx.x) * per < n ? std::size_t(blockIdx.x) * per : n;
    last = first + per < n ? first + per : n;
  }
};

/// 16-byte packs each thread keeps in flight in the block-range loops below.
inline constexpr int block_unroll = 4;

/// dst[i] = src[i] for packs i in [first, last), by `step` threads numbered lane = 0..step-1
/// (either side local or a peer's).
__device__ inline void strided_copy_packs(uint4* dst, const uint4* src, std::size_t first, std::size_t last,
                                          unsigned lane, unsigned step) {
  unrolled_copy_packs<block_unroll>(dst, src, first + lane, last, step, std::size_t(step) * block_unroll);
}

/// strided_copy_packs by all threads of the block.
__device__ inline void block_copy_packs(uint4* dst, const uint4* src, std::size_t first, std::size_t last) {
  strided_copy_packs(dst, src, first, last, threadIdx.x, blockDim.x);
}

/// store(i, sum) for packs i in [first, last), sum = source(0)[i] + ... + source(n_src-1)[i] in
/// that order, by `step` threads numbered lane = 0..step-1. Sums in float, one rounding.
/// source(s) returns a const uint4* (local or a peer's). U: packs in flight per thread and source.
template <reducible T, int U = block_unroll, class Source, class Store>
__device__ void strided_sum_packs_to(const Source& source, int n_src, const Store& store, std::size_t first,
                                     std::size_t last, std::size_t lane, std::size_t step) {
  if (n_src == 2) {  // the common case, with all loads issued before the first add (no float arrays)
    const uint4 *s0 = source(0), *s1 = source(1);
    for (std::size_t i = first + lane; i < last; i += step * U) {
      uint4 a[U], b[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (i + u * step < last) {
          a[u] = ld_v4(s0 + i + u * step);
          b[u] = ld_v4(s1 + i + u * step);
        }
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (i + u * step < last) {
          acc_v4<T> acc;
          acc.set(a[u]);
          acc.add(b[u]);
          store(i + u * step, acc.pack());
        }
    }
    return;
  }
  for (std::size_t i = first + lane; i < last; i += step * U) {
    acc_v4<T> acc[U];
    uint4 v[U];
    const uint4* s0 = source(0);
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * step < last) v[u] = ld_v4(s0 + i + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u].set(v[u]);
    for (int s = 1; s < n_src; ++s) {
      const uint4* p = source(s);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (i + u * step < last) v[u] = ld_v4(p + i + u * step);
#pragma unroll
      for (int u = 0; u < U; ++u) acc[u].add(v[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * step < last) store(i + u * step, acc[u].pack());
  }
}

/// out[i] = the sum, for packs i in [first, last) (see strided_sum_packs_to).
template <reducible T, int U = block_unroll, class Source>
__device__ void strided_sum_packs(const Source& source, int n_src, uint4* out, std::size_t first, std::size_t last,
                                  std::size_t lane, std::size_t step) {
  strided_sum_packs_to<T, U>(source, n_src, [out](std::size_t i, uint4 v) { st_v4(out + i, v); }, first, last, lane,
                             step);
}

/// strided_sum_packs by the threads of one block (grid_wide = false) or of the whole grid.
template <reducible T, bool grid_wide = false, int U = block_unroll, class Source>
__device__ void sum_packs(const Source& source, int n_src, uint4* out, std::size_t first, std::size_t last) {
  if constexpr (grid_wide)
    strided_sum_packs<T, U>(source, n_src, out, first, last, std::size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                            std::size_t(gridDim.x) * blockDim.x);
  else
    strided_sum_packs<T, U>(source, n_src, out, first, last, threadIdx.x, blockDim.x);
}


/// out[i] = sum over ranks, in rank order, of c.peer(src, r)[i] for packs [0, n_packs), by the
/// whole grid (with to_all_ranks, into every rank's out, as reduce_packs). U = 0: reduce_packs (2
/// packs in flight per thread, one source after the other); U > 0: U packs per thread from every
/// source issued together (more bytes in flight over the links, more registers). Results are
/// bit-identical either way.
template <reducible T, int U, bool to_all_ranks = false>
__device__ void reduce_ranks(const comm& c, const uint4* src, uint4* out, std::size_t n_packs) {
  if constexpr (U == 0) {
    reduce_packs<T, to_all_ranks>(c, src, out, n_packs);
  } else {
    auto source = [&](int r) { return c.peer(src, r); };
    const std::size_t lane = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
    if constexpr (to_all_ranks)  // out points into my heap: each sum goes to every rank's out
      strided_sum_packs_to<T, U>(
          source, c.world,
          [&](std::size_t i, uint4 v) {
            for (int d = 0; d < c.world; ++d) st_v4(c.peer(out, (c.rank + d) % c.world) + i, v);
          },
          0, n_packs, lane, step);
    else
      strided_sum_packs<T, U>(source, c.world, out, 0, n_packs, lane, step);
  }
}

}  // namespace kr
