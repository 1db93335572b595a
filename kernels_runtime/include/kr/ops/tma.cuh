#pragma once
/// Bulk (TMA) copies between global memory — local or a peer's, through comm::peer — and shared
/// memory, on sm_90. One thread issues a copy of up to ~1 MiB; sizes and addresses are multiples
/// of 16 bytes.
///
/// Loads complete on an mbarrier:   bulk_expect(bar, bytes); bulk_load(dst, src, bytes, bar);
///                                  bulk_wait(bar, phase);   // all threads may wait
/// Stores complete by bulk group:   bulk_store(dst, src, bytes); bulk_commit(); bulk_wait_all();
/// Ordering contract: shared memory written by ordinary stores must be followed by
/// fence_proxy_async_shared() (in the writing threads) and a __syncthreads before a bulk_store reads
/// it. A bulk_store's data is visible to peers only after bulk_wait_all() returns (not the .read
/// variant), after which a kr::signal_add releases it as usual.
#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "kr/ops/tma.cuh needs sm_90 or newer (build with -gencode arch=compute_90a,code=sm_90a)"
#endif

namespace kr {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// One mbarrier in shared memory (8 bytes, 8-byte aligned).
struct alignas(8) mbarrier {
  std::uint64_t word;
};

__device__ __forceinline__ void mbarrier_init(mbarrier* bar, std::uint32_t arrivals = 1) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// The calling thread arrives and announces `bytes` of bulk loads that will complete on bar.
__device__ __forceinline__ void bulk_expect(mbarrier* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

/// Waits until phase `phase` (0, 1, 0, ... per use) of bar has completed.
__device__ __forceinline__ void bulk_wait(mbarrier* bar, std::uint32_t phase) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}

/// Global (local or peer) -> shared, completing on bar.
__device__ __forceinline__ void bulk_load(void* dst_smem, const void* src_global, std::uint32_t bytes, mbarrier* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(dst_smem)),
      "l"(src_global), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

/// Shared -> global (local or peer), tracked by the issuing thread's bulk group.
__device__ __forceinline__ void bulk_store(void* dst_global, const void* src_smem, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst_global),
               "r"(smem_addr(src_smem)), "r"(bytes)
               : "memory");
}

/// Shared -> global with the addition done at the destination (no multicast): dst[i] += src[i].
__device__ __forceinline__ void bulk_store_add_f32(float* dst_global, const float* src_smem, std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst_global),
               "r"(smem_addr(src_smem)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_store_add_bf16(void* dst_global, const void* src_smem, std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%0], [%1], %2;" ::"l"(dst_global),
               "r"(smem_addr(src_smem)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/// Waits until every committed bulk store of this thread has completed (writes visible).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/// Waits until every committed bulk store of this thread has finished reading shared memory.
__device__ __forceinline__ void bulk_wait_all_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

/// Orders this thread's ordinary shared-memory writes before later bulk (async-proxy) reads.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace kr
