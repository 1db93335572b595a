#pragma once
/// Rooted collectives, SM-driven pull. `in` must be in the heap (at least on the ranks that are
/// read: the root for broadcast/scatter, everyone for reduce/gather); `out` anywhere on this GPU.
/// Every rank launches the kernel (the barriers need everyone), even where it moves nothing.
///   broadcast: out = root's in                      (bytes)
///   scatter:   out = root's in[rank*bytes, +bytes)   (root's in holds world blocks)
///   gather:    root: out[r*bytes, +bytes) = r's in   (others: nothing)
///   reduce:    root: out = sum over ranks of in      (others: nothing; rank order, as all_reduce)
#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

enum class rooted_op { broadcast, scatter, gather };

static __global__ void rooted_copy_kernel(comm c, rooted_op op, const char* in, char* out, std::size_t bytes,
                                          int root, int ch) {
  block_barrier(c, ch);
  if (op == rooted_op::broadcast) copy_bytes(out, c.peer(in, root), bytes);
  if (op == rooted_op::scatter) copy_bytes(out, c.peer(in, root) + std::size_t(c.rank) * bytes, bytes);
  if (op == rooted_op::gather && c.rank == root)
    for (int k = 0; k < c.world; ++k) {
      const int r = (c.rank + k) % c.world;
      copy_bytes(out + std::size_t(r) * bytes, c.peer(in, r), bytes);
    }
  block_barrier(c, ch);
}

template <reducible T>
__global__ void reduce_kernel(comm c, const T* in, T* out, std::size_t n, int root, int ch) {
  block_barrier(c, ch);
  if (c.rank == root) {
    constexpr int E = pack_traits<T>::elems;
    const std::size_t n_packs = (aligned16(in) && aligned16(out)) ? n / E : 0;
    reduce_packs<T>(c, reinterpret_cast<const uint4*>(in), reinterpret_cast<uint4*>(out), n_packs);
    reduce_tail<T>(c, in, out, n_packs * E, n);
  }
  block_barrier(c, ch);
}

/// bytes: one block (broadcast: the whole message).
inline cudaError_t rooted_copy(const comm& c, rooted_op op, const void* in, void* out, std::size_t bytes, int root,
                               cudaStream_t stream, launch_params p = {}) {
  const std::size_t work = op == rooted_op::gather ? bytes * std::size_t(c.world) : bytes;
  rooted_copy_kernel<<<grid_blocks(p, work / 16), p.threads, 0, stream>>>(
      c, op, static_cast<const char*>(in), static_cast<char*>(out), bytes, root, p.channel);
  return cudaGetLastError();
}

template <reducible T>
cudaError_t reduce(const comm& c, const T* in, T* out, std::size_t n, int root, cudaStream_t stream,
                   launch_params p = {}) {
  reduce_kernel<T><<<grid_blocks(p, n / pack_traits<T>::elems), p.threads, 0, stream>>>(c, in, out, n, root,
                                                                                       p.channel);
  return cudaGetLastError();
}

}  // namespace kr
