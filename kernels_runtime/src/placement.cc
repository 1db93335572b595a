#include "kr/host/placement.h"

#include "kr/host/error.h"
#include "kr/types/comm.cuh"

namespace kr::host {

placement::placement(int world, int gpus) : world_(world), gpus_(gpus) {
  if (world < 1 || world > kr::max_world)
    throw error("kr placement: world of " + std::to_string(world) + " ranks; use 1 to " +
                std::to_string(kr::max_world) + " (kr::max_world)");
  if (gpus < 1)
    throw error("kr placement: " + std::to_string(gpus) +
                " GPUs visible; kernels_runtime ranks need a CUDA device (check the driver and CUDA_VISIBLE_DEVICES)");
}

int placement::device_of(int rank) const {
  if (rank < 0 || rank >= world_)
    throw error("kr placement: rank " + std::to_string(rank) + " outside a world of " + std::to_string(world_));
  return rank % gpus_;
}

std::string placement::describe() const {
  const auto plural = [](int n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); };
  std::string s = plural(world_, "rank") + " on " + plural(devices_used(), "GPU");
  if (co_located())
    s += ", co-located (up to " + std::to_string((world_ + gpus_ - 1) / gpus_) +
         " per GPU, time-sliced): results are checked, timings mean nothing";
  else
    s += ", one per GPU";
  return s;
}

}  // namespace kr::host
