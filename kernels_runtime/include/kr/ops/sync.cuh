#pragma once
/// Cross-GPU signals on monotonically increasing 64-bit counters.
///
/// Contract: everything the signalling thread wrote (or saw, through a __syncthreads before the
/// signal) before `signal_add` / `signal_set` is visible to a thread on any GPU after its
/// `wait_geq` on that counter returns (release/acquire at system scope). Counters only grow, so
/// nothing is ever reset and a late waiter can never miss a signal: wait for `>= expected`.
#include <cstdint>
#include <cstdio>

#ifndef KR_WAIT_TIMEOUT_NS
/// A wait that sees no progress for this long prints who waited for what, then traps (the kernel
/// fails with an error instead of hanging the GPU). Override with -DKR_WAIT_TIMEOUT_NS=...
#define KR_WAIT_TIMEOUT_NS 20000000000ull
#endif

namespace kr {

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Atomically adds v to a counter (usually on a peer), releasing this thread's prior writes.
__device__ __forceinline__ void signal_add(std::uint64_t* counter, std::uint64_t v = 1) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(counter), "l"(v) : "memory");
}

/// Stores v to a counter (usually on a peer), releasing this thread's prior writes. Only one
/// writer per counter, and v must grow from one call to the next.
__device__ __forceinline__ void signal_set(std::uint64_t* counter, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(counter), "l"(v) : "memory");
}

__device__ __forceinline__ std::uint64_t load_acquire(const std::uint64_t* counter) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(counter) : "memory");
  return v;
}

__device__ __forceinline__ std::uint64_t load_relaxed(const std::uint64_t* counter) {
  std::uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(counter) : "memory");
  return v;
}

/// Spins until *counter >= expected, then acquires. Traps with a message after KR_WAIT_TIMEOUT_NS.
__device__ __noinline__ inline void wait_geq_slow(const std::uint64_t* counter, std::uint64_t expected,
                                                  const char* what) {
  const std::uint64_t start = global_timer_ns();
  std::uint64_t seen = load_relaxed(counter);
  for (unsigned spin = 0; seen < expected; ++spin) {
    if ((spin & 255u) == 255u && global_timer_ns() - start > KR_WAIT_TIMEOUT_NS) {
      printf("kr: %s: waited %.1f s for counter %p to reach %llu, it is %llu (block %d, thread %d); "
             "is the peer running the same sequence of collectives?\n",
             what, double(KR_WAIT_TIMEOUT_NS) * 1e-9, static_cast<const void*>(counter),
             static_cast<unsigned long long>(expected), static_cast<unsigned long long>(seen),
             int(blockIdx.x), int(threadIdx.x));
      __trap();
    }
    seen = load_relaxed(counter);
  }
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

__device__ __forceinline__ void wait_geq(const std::uint64_t* counter, std::uint64_t expected,
                                         const char* what = "kr::wait_geq") {
  if (load_acquire(counter) >= expected) return;
  wait_geq_slow(counter, expected, what);
}

}  // namespace kr
