#pragma once
/// Copy-engine collectives for large messages: the data moves with cudaMemcpyAsync between heap
/// addresses (a peer's heap is mapped in this process, so a peer copy is an ordinary device copy),
/// leaving the SMs free. All of them push (the copy engine writes to the peer: measured faster than
/// pulling). One-block barrier kernels give the same contract as the SM versions. Peer copies go on one stream per peer (forked from and joined back to `stream`, so
/// the whole thing can be captured in a CUDA graph).
#include <cuda_runtime.h>

#include <vector>

#include "../ops/barrier.cuh"
#include "launch.cuh"

namespace kr {

static __global__ void barrier_kernel(comm c, int ch) { block_barrier(c, ch); }

/// A one-block cross-rank barrier on `stream`: every rank's prior work on its stream is done and
/// visible to every other rank when the following work starts.
inline cudaError_t barrier(const comm& c, cudaStream_t stream, int channel = 0) {
  barrier_kernel<<<1, 32, 0, stream>>>(c, channel);
  return cudaGetLastError();
}

/// Streams and events for copy-engine work. Create once per rank, reuse for every call.
class copy_engines {
 public:
  explicit copy_engines(int world, int max_chunks = 64) {
    streams_.resize(std::size_t(world));
    for (auto& s : streams_) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    events_.resize(std::size_t(world) + std::size_t(max_chunks) + 1);
    for (auto& e : events_) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  }
  ~copy_engines() {
    for (auto e : events_) cudaEventDestroy(e);
    for (auto s : streams_) cudaStreamDestroy(s);
  }
  copy_engines(const copy_engines&) = delete;
  copy_engines& operator=(const copy_engines&) = delete;

  cudaStream_t stream(int i) const { return streams_[std::size_t(i)]; }
  cudaEvent_t event(int i) const { return events_[std::size_t(i)]; }
  int max_chunks() const { return int(events_.size() - streams_.size() - 1); }

  /// Makes every side stream wait for `main`'s work so far.
  cudaError_t fork(cudaStream_t main) const {
    cudaError_t e = cudaEventRecord(events_.back(), main);
    for (auto s : streams_)
      if (e == cudaSuccess) e = cudaStreamWaitEvent(s, events_.back(), 0);
    return e;
  }
  /// Makes `main` wait for every side stream's work so far.
  cudaError_t join(cudaStream_t main) const {
    cudaError_t e = cudaSuccess;
    for (std::size_t i = 0; i < streams_.size() && e == cudaSuccess; ++i) {
      e = cudaEventRecord(events_[i], streams_[i]);
      if (e == cudaSuccess) e = cudaStreamWaitEvent(main, events_[i], 0);
    }
    return e;
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
};

#define KR_CE_TRY(expr)                      \
  do {                                       \
    cudaError_t kr_err_ = (expr);            \
    if (kr_err_ != cudaSuccess) return kr_err_; \
  } while (0)

/// All-gather by copy engine, push: my `in` goes to block `rank` of every rank's `out`.
/// `out` must be in the heap; `bytes` is one rank's block.
inline cudaError_t ce_all_gather(const comm& c, const copy_engines& ce, const void* in, void* out,
                                 std::size_t bytes, cudaStream_t stream, int channel = 0) {
  KR_CE_TRY(barrier(c, stream, channel));  // every rank's out is free to overwrite
  KR_CE_TRY(ce.fork(stream));
  char* mine = static_cast<char*>(out) + std::size_t(c.rank) * bytes;
  for (int r = 0; r < c.world; ++r)
    KR_CE_TRY(cudaMemcpyAsync(c.peer(mine, r), in, bytes, cudaMemcpyDeviceToDevice, ce.stream(r)));
  KR_CE_TRY(ce.join(stream));
  return barrier(c, stream, channel);  // my blocks have landed everywhere, and theirs here
}

/// All-to-all by copy engine, push: block d of my `in` goes to block `rank` of rank d's `out`.
inline cudaError_t ce_all_to_all(const comm& c, const copy_engines& ce, const void* in, void* out,
                                 std::size_t bytes, cudaStream_t stream, int channel = 0) {
  KR_CE_TRY(barrier(c, stream, channel));
  KR_CE_TRY(ce.fork(stream));
  const char* src = static_cast<const char*>(in);
  char* mine = static_cast<char*>(out) + std::size_t(c.rank) * bytes;
  for (int d = 0; d < c.world; ++d)
    KR_CE_TRY(cudaMemcpyAsync(c.peer(mine, d), src + std::size_t(d) * bytes, bytes, cudaMemcpyDeviceToDevice,
                              ce.stream(d)));
  KR_CE_TRY(ce.join(stream));
  return barrier(c, stream, channel);
}

/// Sources of a local sum, in rank order.
struct source_list {
  const void* src[max_world];
};

/// Entry barrier of a push collective; also advances this rank's op counter of the channel, which
/// numbers the arrival signals of this op (each rank counts the same ops, so they agree).
static __global__ void push_entry_kernel(comm c, int ch) {
  block_barrier(c, ch);
  if (threadIdx.x == 0) ++*c.generation(ch, grid_slot_block);
}

/// After a chunk's copy to rank `dst` has completed (stream order): tell it, with this op's number.
static __global__ void chunk_arrived_kernel(comm c, int ch, int dst, int chunk) {
  signal_set(c.slot(dst, ch, c.rank, chunk), *c.generation(ch, grid_slot_block));
}

/// Waits until every peer's copy of chunk `chunk` has landed here, then sums it in rank order.
template <reducible T>
__global__ void sum_arrived_kernel(comm c, int ch, int chunk, source_list s, T* out, std::size_t n_packs) {
  if (threadIdx.x < c.world && int(threadIdx.x) != c.rank)
    wait_geq(c.slot(c.rank, ch, threadIdx.x, chunk), *c.generation(ch, grid_slot_block), "kr copy-engine chunk");
  __syncthreads();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n_packs;
       i += std::size_t(gridDim.x) * blockDim.x) {
    acc_v4<T> acc;
    acc.set(ld_v4(static_cast<const uint4*>(s.src[0]) + i));
    for (int r = 1; r < c.world; ++r) acc.add(ld_v4(static_cast<const uint4*>(s.src[r]) + i));
    st_v4(reinterpret_cast<uint4*>(out) + i, acc.pack());
  }
}

/// Copy-engine reduction, push: every rank copies its contribution to each peer's `scratch`
/// (world * n elements, in the heap) chunk by chunk, signals each chunk's arrival from a one-thread
/// kernel behind the copy, and each rank sums the chunks as they land (rank order, bit-identical
/// everywhere). all_reduce: every peer gets in[0, n). reduce_scatter: rank r gets in[r*n, (r+1)*n).
/// One barrier per call (at entry: the peers' scratch is free again). Uses barrier channel `ch`
/// and its signal slots [0, chunks); n * sizeof(T) must be a multiple of 16.
template <reducible T>
cudaError_t ce_push_reduce(const comm& c, const copy_engines& ce, const T* in, T* out, T* scratch, std::size_t n,
                           bool scatter, cudaStream_t stream, std::size_t chunk_bytes, int ch, int reduce_blocks) {
  const std::size_t bytes = n * sizeof(T);
  std::size_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  if (chunks > std::size_t(ce.max_chunks())) {
    chunks = std::size_t(ce.max_chunks());
    chunk_bytes = (bytes / chunks + 15) / 16 * 16;
    chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  }
  push_entry_kernel<<<1, 32, 0, stream>>>(c, ch);
  KR_CE_TRY(cudaGetLastError());
  KR_CE_TRY(ce.fork(stream));
  const char* my_in = reinterpret_cast<const char*>(in);
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t off = k * chunk_bytes, len = std::min(chunk_bytes, bytes - off);
    for (int d = 0; d < c.world; ++d) {
      if (d == c.rank) continue;
      const char* src = my_in + (scatter ? std::size_t(d) * bytes : 0) + off;
      char* dst = reinterpret_cast<char*>(c.peer(scratch, d)) + std::size_t(c.rank) * bytes + off;
      KR_CE_TRY(cudaMemcpyAsync(dst, src, len, cudaMemcpyDeviceToDevice, ce.stream(d)));
      chunk_arrived_kernel<<<1, 1, 0, ce.stream(d)>>>(c, ch, d, int(k));
      KR_CE_TRY(cudaGetLastError());
    }
  }
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t off = k * chunk_bytes, len = std::min(chunk_bytes, bytes - off);
    source_list src{};
    for (int r = 0; r < c.world; ++r)
      src.src[r] = r == c.rank ? my_in + (scatter ? std::size_t(r) * bytes : 0) + off
                               : reinterpret_cast<const char*>(scratch) + std::size_t(r) * bytes + off;
    sum_arrived_kernel<T><<<reduce_blocks, 512, 0, stream>>>(
        c, ch, int(k), src, reinterpret_cast<T*>(reinterpret_cast<char*>(out) + off), len / 16);
    KR_CE_TRY(cudaGetLastError());
  }
  return ce.join(stream);  // my copies are done: `in` may be reused once this returns in stream order
}

/// All-reduce by copy engine (large messages). `scratch`: world * n elements in the heap.
template <reducible T>
cudaError_t ce_all_reduce(const comm& c, const copy_engines& ce, const T* in, T* out, T* scratch, std::size_t n,
                          cudaStream_t stream, std::size_t chunk_bytes = std::size_t(16) << 20, int channel = 0,
                          int reduce_blocks = 132) {
  return ce_push_reduce(c, ce, in, out, scratch, n, false, stream, chunk_bytes, channel, reduce_blocks);
}

/// Reduce-scatter by copy engine: `in` holds world * n elements, `out` gets n; `scratch`: world * n
/// elements in the heap.
template <reducible T>
cudaError_t ce_reduce_scatter(const comm& c, const copy_engines& ce, const T* in, T* out, T* scratch, std::size_t n,
                              cudaStream_t stream, std::size_t chunk_bytes = std::size_t(16) << 20, int channel = 0,
                              int reduce_blocks = 132) {
  return ce_push_reduce(c, ce, in, out, scratch, n, true, stream, chunk_bytes, channel, reduce_blocks);
}

#undef KR_CE_TRY

}  // namespace kr
