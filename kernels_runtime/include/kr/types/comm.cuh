#pragma once
/// kr::comm — what a kernel needs to reach its peers: rank, world size, the base address of every
/// rank's symmetric heap as mapped in this process, and where the signal pad lives in each heap.
/// Passed to kernels by value (it is a few hundred bytes). Built on the host by kr::symmetric_heap.
///
/// Identical offsets: an object at byte offset `o` of my heap is at `base[r] + o` in rank r's heap,
/// so `peer(p, r)` turns any pointer into my heap into the same object on rank r.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KR_HD __host__ __device__ __forceinline__
#else
#define KR_HD inline
#endif

namespace kr {

/// Capacity of the peer table, not the world size: the world size is comm::world, set at run time.
inline constexpr int max_world = 16;
/// Independent barrier/signal channels (a kernel and the next one may use different channels).
inline constexpr int channels = 8;
/// Blocks per launch that can take part in a block-level barrier on one channel.
inline constexpr int max_blocks = 1024;

/// Byte layout of the control region at the start of every symmetric heap.
///   pad:   uint64 [channels][max_world][max_blocks]   written by peers (signals arrive here)
///   local: uint64 [channels][max_blocks]              this rank's per-block barrier generations
///          uint64 [channels] grid arrive counters, uint64 [channels] grid release counters,
///          uint64 [channels] call epochs, uint64 [channels] finished-block counts (see kernel_epoch)
struct control_layout {
  static constexpr std::size_t pad_slots = std::size_t(channels) * max_world * max_blocks;
  static constexpr std::size_t pad_bytes = pad_slots * sizeof(std::uint64_t);
  static constexpr std::size_t local_slots = std::size_t(channels) * max_blocks + 4 * channels;
  static constexpr std::size_t local_bytes = local_slots * sizeof(std::uint64_t);
  static constexpr std::size_t bytes = pad_bytes + local_bytes;  // 1 MiB + 64 KiB + 256 B
};

struct comm {
  int rank = 0;
  int world = 1;
  char* base[max_world] = {};      ///< base[r]: rank r's heap, mapped in this process
  std::uint64_t control_offset = 0;  ///< byte offset of the control region in every heap

  /// The same object on rank r (p must point into this rank's heap).
  template <class T>
  KR_HD T* peer(T* p, int r) const {
    return reinterpret_cast<T*>(base[r] + (reinterpret_cast<const char*>(p) - base[rank]));
  }
  /// Byte offset of p in this rank's heap.
  KR_HD std::uint64_t offset_of(const void* p) const {
    return std::uint64_t(reinterpret_cast<const char*>(p) - base[rank]);
  }
  /// Signal slot on rank `owner` that rank `src` bumps for block `block` of channel `ch`.
  KR_HD std::uint64_t* slot(int owner, int ch, int src, int block) const {
    auto* pad = reinterpret_cast<std::uint64_t*>(base[owner] + control_offset);
    return pad + (std::size_t(ch) * max_world + src) * max_blocks + block;
  }
  /// This rank's private generation counter of (channel, block).
  KR_HD std::uint64_t* generation(int ch, int block) const {
    return local_ctl() + std::size_t(ch) * max_blocks + block;
  }
  KR_HD std::uint64_t* grid_arrive(int ch) const {
    return local_ctl() + std::size_t(channels) * max_blocks + ch;
  }
  KR_HD std::uint64_t* grid_release(int ch) const {
    return local_ctl() + std::size_t(channels) * max_blocks + channels + ch;
  }
  /// Calls completed on channel ch by kernels that count them (kr::kernel_epoch): the same number
  /// in every block of one call, whatever the grid sizes of earlier calls.
  KR_HD std::uint64_t* epoch(int ch) const {
    return local_ctl() + std::size_t(channels) * max_blocks + 2 * channels + ch;
  }
  /// Blocks of the current call on channel ch that have finished (reset by the last one).
  KR_HD std::uint64_t* blocks_done(int ch) const {
    return local_ctl() + std::size_t(channels) * max_blocks + 3 * channels + ch;
  }

 private:
  KR_HD std::uint64_t* local_ctl() const {
    return reinterpret_cast<std::uint64_t*>(base[rank] + control_offset + control_layout::pad_bytes);
  }
};

}  // namespace kr
