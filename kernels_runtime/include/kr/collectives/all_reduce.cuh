#pragma once
/// All-reduce (sum) over the symmetric heap, SM-driven.
///
/// one-shot: every rank reads all ranks' inputs and writes its own output (world-1 times the
///   data over each rank's link; the fastest for 2 ranks at every size). `in` must be in the heap.
/// two-shot: rank r reduces slice r and stores it into every rank's output (2(world-1)/world
///   times the data; better from 3-4 ranks up). `in` and `out` must be in the heap.
/// Both: entry barrier (peers' inputs are ready), data movement, exit barrier (nobody still reads
/// my input, and, for two-shot, every slice has landed in my output). Sums run in rank order in
/// float, so every rank gets bit-identical results.
#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

template <reducible T, int U = 0>
__global__ void all_reduce_one_shot_kernel(comm c, const T* in, T* out, std::size_t n, int ch) {
  block_barrier(c, ch);
  constexpr int E = pack_traits<T>::elems;
  std::size_t n_packs = (aligned16(in) && aligned16(out)) ? n / E : 0;
  reduce_ranks<T, U>(c, reinterpret_cast<const uint4*>(in), reinterpret_cast<uint4*>(out), n_packs);
  reduce_tail<T>(c, in, out, n_packs * E, n);
  block_barrier(c, ch);
}

template <reducible T, int U = 0>
__global__ void all_reduce_two_shot_kernel(comm c, const T* in, T* out, std::size_t n, int ch) {
  block_barrier(c, ch);
  constexpr int E = pack_traits<T>::elems;
  const std::size_t n_packs = (aligned16(in) && aligned16(out)) ? n / E : 0;
  const std::size_t chunk = (n_packs + c.world - 1) / c.world;
  const std::size_t first = (chunk * c.rank < n_packs ? chunk * c.rank : n_packs);
  const std::size_t last = (first + chunk < n_packs ? first + chunk : n_packs);
  reduce_ranks<T, U, true>(c, reinterpret_cast<const uint4*>(in) + first, reinterpret_cast<uint4*>(out) + first,
                           last - first);
  reduce_tail<T>(c, in, out, n_packs * E, n);  // the few elements past the last pack: everyone, locally
  block_barrier(c, ch);
}

enum class all_reduce_algo { one_shot, two_shot };

template <reducible T>
cudaError_t all_reduce(const comm& c, const T* in, T* out, std::size_t n, cudaStream_t stream,
                       all_reduce_algo algo = all_reduce_algo::one_shot, launch_params p = {}) {
  const std::size_t packs = n / pack_traits<T>::elems / (algo == all_reduce_algo::two_shot ? c.world : 1);
  const int blocks = grid_blocks(p, packs);
  return launch_unrolled(p, [&](auto unroll) {
    constexpr int U = decltype(unroll)::value;
    if (algo == all_reduce_algo::one_shot)
      all_reduce_one_shot_kernel<T, U><<<blocks, p.threads, 0, stream>>>(c, in, out, n, p.channel);
    else
      all_reduce_two_shot_kernel<T, U><<<blocks, p.threads, 0, stream>>>(c, in, out, n, p.channel);
  });
}

}  // namespace kr
