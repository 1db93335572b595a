#pragma once
/// 16-byte vector loads and stores (local or peer addresses alike: a peer pointer from
/// comm::peer is an ordinary global address), and element-wise sums of such vectors.
///
/// Peer data written during the current kernel must be read with ld_v4 / ld_v4_volatile after a
/// wait (never through the read-only cache: no __ldg, no const __restrict__ on peer pointers).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace kr {

/// Plain 16-byte load (the compiler may batch and reorder these; an acquire orders them).
__device__ __forceinline__ uint4 ld_v4(const void* p) { return *static_cast<const uint4*>(p); }

/// Bypasses L1: for polling data that a peer writes while this kernel runs.
__device__ __forceinline__ uint4 ld_v4_volatile(const void* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

/// Plain 16-byte store.
__device__ __forceinline__ void st_v4(void* p, uint4 v) { *static_cast<uint4*>(p) = v; }

/// Element type traits for 16-byte packs: elems per pack and conversion to/from float.
template <class T>
struct pack_traits;
template <>
struct pack_traits<float> {
  static constexpr int elems = 4;
  __device__ static float to_float(float v) { return v; }
  __device__ static float from_float(float v) { return v; }
};
template <>
struct pack_traits<__nv_bfloat16> {
  static constexpr int elems = 8;
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};
template <>
struct pack_traits<__half> {
  static constexpr int elems = 8;
  __device__ static float to_float(__half v) { return __half2float(v); }
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
};

template <class T>
concept reducible = requires { pack_traits<T>::elems; };

/// A 16-byte pack unpacked into float accumulators.
template <reducible T>
struct acc_v4 {
  float v[pack_traits<T>::elems];

  __device__ void set(uint4 p) {
    const T* e = reinterpret_cast<const T*>(&p);
#pragma unroll
    for (int i = 0; i < pack_traits<T>::elems; ++i) v[i] = pack_traits<T>::to_float(e[i]);
  }
  __device__ void add(uint4 p) {
    const T* e = reinterpret_cast<const T*>(&p);
#pragma unroll
    for (int i = 0; i < pack_traits<T>::elems; ++i) v[i] += pack_traits<T>::to_float(e[i]);
  }
  __device__ uint4 pack() const {
    uint4 p;
    T* e = reinterpret_cast<T*>(&p);
#pragma unroll
    for (int i = 0; i < pack_traits<T>::elems; ++i) e[i] = pack_traits<T>::from_float(v[i]);
    return p;
  }
};

}  // namespace kr
