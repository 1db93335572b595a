#pragma once
/// A symmetric heap: one block of device memory per rank, every rank's block mapped into every
/// rank process, objects at identical offsets everywhere. Its kr::comm is what kernels take.
///
///   kr::host::symmetric_heap heap(device, session, rank, world, {.bytes = 1 << 30});
///   float* x = heap.allocate_n<float>(n);       // same offset on every rank
///   my_kernel<<<...>>>(heap.comm(), x, n);      // heap.comm().peer(x, r) is rank r's x
///
/// Backends: vmm (default) — cuMemCreate with POSIX fd handles passed over the rendezvous socket,
/// all ranks' blocks mapped back to back in one reserved range; legacy_ipc — cudaMalloc and
/// cudaIpc handles, for drivers or sandboxes where fd export fails. The control region (signal pad)
/// is zeroed before any peer can see it. Ranks may share a GPU: a peer block on the same device is
/// imported from the same handle and needs no peer access. Destruction waits for every rank (a host barrier), then
/// unmaps and frees everything; a heap must not outlive the kernels that use it.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "kr/host/heap_layout.h"
#include "kr/host/rendezvous.h"
#include "kr/types/comm.cuh"

namespace kr::host {

enum class heap_backend { vmm, legacy_ipc };

struct heap_options {
  std::size_t bytes = std::size_t(256) << 20;  ///< usable bytes per rank (the control region is extra)
  heap_backend backend = heap_backend::vmm;
  std::chrono::milliseconds timeout = std::chrono::seconds(60);  ///< for every rendezvous step
};

class symmetric_heap {
 public:
  /// Collective: every rank of the session calls it with the same world and options. Makes
  /// `device` current on the calling thread.
  symmetric_heap(int device, const std::string& session, int rank, int world, heap_options options = {});
  ~symmetric_heap();
  symmetric_heap(const symmetric_heap&) = delete;
  symmetric_heap& operator=(const symmetric_heap&) = delete;

  const kr::comm& comm() const { return comm_; }
  int rank() const { return comm_.rank; }
  int world() const { return comm_.world; }
  /// The GPU this rank's heap lives on (co-located ranks share one, see kr/host/placement.h).
  int device() const { return device_; }
  heap_backend backend() const { return options_.backend; }

  /// Collective by convention: all ranks must make the same sequence of calls (not checked).
  void* allocate(std::size_t bytes, std::size_t align = 256);
  template <class T>
  T* allocate_n(std::size_t n, std::size_t align = 256) {
    return static_cast<T*>(allocate(n * sizeof(T), align));
  }
  std::size_t available() const { return layout_.available(); }
  /// Bytes of each rank's heap, from its base (the control region included).
  std::size_t capacity() const { return layout_.capacity(); }

  /// Host-side barrier of all ranks (no GPU work).
  void barrier() { rendezvous_.barrier(); }

 private:
  void create_vmm();
  void create_legacy_ipc();
  void release() noexcept;

  heap_options options_;
  int device_;
  std::size_t block_bytes_ = 0;  ///< bytes mapped per rank (control + usable, rounded)
  heap_layout layout_;
  rendezvous rendezvous_;
  kr::comm comm_{};
  // vmm
  unsigned long long reserved_ = 0;     // CUdeviceptr of the whole reservation
  unsigned long long own_handle_ = 0;   // CUmemGenericAllocationHandle
  // legacy
  void* own_alloc_ = nullptr;
};

}  // namespace kr::host
