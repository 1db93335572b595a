#pragma once
// Shared by the GPU tests: how many GPUs there are (asked in a child, so the test process itself
// never initialises CUDA and can still fork rank processes), how many ranks to run and where, and
// a CUDA check that throws.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kr/host/placement.h"
#include "kr/host/rank_processes.h"
#include "kr/types/comm.cuh"

namespace kr_test {

inline int gpu_count() {
  static const int count = [] {
    auto r = kr::host::run_rank_processes(
        1,
        [](int) {
          int n = 0;
          return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
        },
        std::chrono::seconds(60));
    return r[0].timed_out ? 0 : r[0].code;
  }();
  return count;
}

/// Ranks of the cross-rank tests: KR_TEST_WORLD when set (2 to kr::max_world; more ranks than
/// GPUs share them), else one per GPU, and at least 2, so a one-GPU host runs them co-located.
inline int test_world() {
  const char* v = std::getenv("KR_TEST_WORLD");
  if (v == nullptr || *v == '\0') return std::clamp(gpu_count(), 2, kr::max_world);
  char* end = nullptr;
  const long w = std::strtol(v, &end, 10);
  if (*end != '\0' || w < 2 || w > kr::max_world)
    throw std::invalid_argument("KR_TEST_WORLD='" + std::string(v) + "': set it to a whole number from 2 to " +
                                std::to_string(kr::max_world) + " (the ranks to run), or unset it for one per GPU");
  return int(w);
}

/// Where the cross-rank tests put their ranks (needs a GPU: call it after checking gpu_count()).
inline kr::host::placement test_placement() { return {test_world(), gpu_count()}; }

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace kr_test

#define KR_CHECK(expr) kr_test::check((expr), #expr)
