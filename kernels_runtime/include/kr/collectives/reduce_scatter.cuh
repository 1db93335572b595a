#pragma once
/// Reduce-scatter (sum), SM-driven pull: out[i] = sum over r of rank r's in[rank*n + i], in rank
/// order (bit-identical on every rank). `in` (world*n elements) must be in the heap; `out` (n)
/// anywhere on this GPU. Entry barrier, reduction, exit barrier.
#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

template <reducible T, int U = 0>
__global__ void reduce_scatter_kernel(comm c, const T* in, T* out, std::size_t n, int ch) {
  block_barrier(c, ch);
  constexpr int E = pack_traits<T>::elems;
  const T* mine = in + std::size_t(c.rank) * n;
  const std::size_t n_packs = (aligned16(mine) && aligned16(out)) ? n / E : 0;
  reduce_ranks<T, U>(c, reinterpret_cast<const uint4*>(mine), reinterpret_cast<uint4*>(out), n_packs);
  reduce_tail<T>(c, mine, out, n_packs * E, n);
  block_barrier(c, ch);
}

/// n: elements of each rank's output (the input holds world * n).
template <reducible T>
cudaError_t reduce_scatter(const comm& c, const T* in, T* out, std::size_t n, cudaStream_t stream,
                           launch_params p = {}) {
  const int blocks = grid_blocks(p, n / pack_traits<T>::elems);
  return launch_unrolled(p, [&](auto unroll) {
    reduce_scatter_kernel<T, decltype(unroll)::value><<<blocks, p.threads, 0, stream>>>(c, in, out, n, p.channel);
  });
}

}  // namespace kr
