#pragma once
/// Grid-stride building blocks the collectives are made of. Each block of the grid takes an equal
/// share; every function is safe to call from every thread of the grid (no barriers inside).
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

/// dst[i] = src[i] for packs [0, n_packs); either side may be a peer address.
__device__ inline void copy_packs(uint4* dst, const uint4* src, std::size_t n_packs) {
  const grid_stride gs;
  const std::size_t bdim = blockDim.x;
  for (std::size_t i = gs.first; i < n_packs; i += gs.step) {
    uint4 v[pack_unroll];
#pragma unroll
    for (int u = 0; u < pack_unroll; ++u)
      if (i + u * bdim < n_packs) v[u] = ld_v4(src + i + u * bdim);
#pragma unroll
    for (int u = 0; u < pack_unroll; ++u)
      if (i + u * bdim < n_packs) st_v4(dst + i + u * bdim, v[u]);
  }
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

}  // namespace kr
