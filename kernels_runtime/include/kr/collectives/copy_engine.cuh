#pragma once
/// Copy-engine collectives for large messages: the data moves with cudaMemcpyAsync between heap
/// addresses (a peer's heap is mapped in this process, so a peer copy is an ordinary device copy),
/// leaving the SMs free. One-block barrier kernels before and after give the same contract as the
/// SM versions. Peer copies go on one stream per peer (forked from and joined back to `stream`, so
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

/// Local sum in rank order of up to max_world sources (the reduction half of ce_all_reduce).
struct source_list {
  const void* src[max_world];
};

template <reducible T>
__global__ void sum_sources_kernel(source_list s, int n_src, T* out, std::size_t n_packs) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n_packs;
       i += std::size_t(gridDim.x) * blockDim.x) {
    acc_v4<T> acc;
    acc.set(ld_v4(static_cast<const uint4*>(s.src[0]) + i));
    for (int r = 1; r < n_src; ++r) acc.add(ld_v4(static_cast<const uint4*>(s.src[r]) + i));
    st_v4(reinterpret_cast<uint4*>(out) + i, acc.pack());
  }
}

/// All-reduce by copy engine for large messages: pulls each peer's input, chunk by chunk, into
/// `scratch` ((world-1) * n elements, this GPU, need not be in the heap) and sums each chunk as it
/// lands, so the link stays busy while the SMs add. `in` must be in the heap; n * sizeof(T) and
/// chunk_bytes multiples of 16; results bit-identical on every rank.
template <reducible T>
cudaError_t ce_all_reduce(const comm& c, const copy_engines& ce, const T* in, T* out, T* scratch, std::size_t n,
                          cudaStream_t stream, std::size_t chunk_bytes = std::size_t(16) << 20,
                          int channel = 0, int reduce_blocks = 264) {
  const std::size_t bytes = n * sizeof(T);
  std::size_t chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  if (chunks > std::size_t(ce.max_chunks())) {
    chunks = std::size_t(ce.max_chunks());
    chunk_bytes = (bytes / chunks + 15) / 16 * 16;
  }
  KR_CE_TRY(barrier(c, stream, channel));  // every input is ready
  KR_CE_TRY(ce.fork(stream));
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t off = k * chunk_bytes, len = std::min(chunk_bytes, bytes - off);
    int slot = 0;
    source_list src{};
    for (int r = 0; r < c.world; ++r) {
      if (r == c.rank) {
        src.src[r] = reinterpret_cast<const char*>(in) + off;
        continue;
      }
      char* dst = reinterpret_cast<char*>(scratch) + std::size_t(slot++) * bytes + off;
      KR_CE_TRY(cudaMemcpyAsync(dst, reinterpret_cast<const char*>(c.peer(in, r)) + off, len,
                                cudaMemcpyDeviceToDevice, ce.stream(r)));
      src.src[r] = dst;
    }
    for (int r = 0; r < c.world; ++r) {  // this chunk's copies from every peer are done
      if (r == c.rank) continue;
      KR_CE_TRY(cudaEventRecord(ce.event(c.world + int(k)), ce.stream(r)));
      KR_CE_TRY(cudaStreamWaitEvent(stream, ce.event(c.world + int(k)), 0));
    }
    sum_sources_kernel<T><<<reduce_blocks, 512, 0, stream>>>(src, c.world,
                                                             reinterpret_cast<T*>(reinterpret_cast<char*>(out) + off),
                                                             len / 16);
    KR_CE_TRY(cudaGetLastError());
  }
  KR_CE_TRY(ce.join(stream));
  return barrier(c, stream, channel);  // no peer still reads my input
}

#undef KR_CE_TRY

}  // namespace kr
