#pragma once
// Shared by the GPU tests: how many GPUs there are (asked in a child, so the test process itself
// never initialises CUDA and can still fork rank processes), and a CUDA check that throws.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kr/host/rank_processes.h"

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

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace kr_test

#define KR_CHECK(expr) kr_test::check((expr), #expr)
