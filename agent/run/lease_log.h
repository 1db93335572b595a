// OUT/leases.jsonl: every lease of the run (pkb commands and final scoring), one line each
// ({"holder", "gpus", "start", "end"}), so that a run shows by itself that no two leases of a GPU
// overlapped. Appended across reruns.
#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>

#include "agent/run/scheduler/gpu_scheduler.h"

namespace pk::run {

class lease_log {
 public:
  /// Logs every lease of `gpus` that ends while this object lives. Throws std::runtime_error
  /// when `file` cannot be opened.
  lease_log(scheduler::gpu_scheduler& gpus, const std::filesystem::path& file);
  /// Call once every lease of the run has ended.
  ~lease_log();
  lease_log(const lease_log&) = delete;
  lease_log& operator=(const lease_log&) = delete;

 private:
  scheduler::gpu_scheduler& gpus_;
  std::mutex mu_;
  std::ofstream out_;
};

}  // namespace pk::run
