// The GPUs this process may lease: within what a batch system or the user granted it, so that a
// Slurm task on a shared node never leases another job's GPUs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pk::scheduler {

/// Reads an environment variable (std::getenv by default; tests pass a map).
using env_lookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_env(const std::string& name);

/// Where the usable GPUs came from, for messages ("Slurm gave this task 2 GPUs").
struct gpu_allocation {
  std::vector<int> gpus;  ///< host GPU indices, ascending
  std::string source;     ///< "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", or "host" (all of them)
};

/// The host GPUs (`host`, from detect_host_gpus) this process may use, in this order of precedence:
/// inside a Slurm job (SLURM_JOB_ID set) SLURM_STEP_GPUS, else SLURM_JOB_GPUS (the job's GRES
/// indices, which are the host's GPU indices when gres.conf lists /dev/nvidia0.. in order or
/// AutoDetect=nvml numbers them); else CUDA_VISIBLE_DEVICES (indices; an empty value means none);
/// else every host GPU. Under ConstrainDevices Slurm renumbers CUDA_VISIBLE_DEVICES from 0, which is
/// why the job's own GPU list comes first. Throws std::invalid_argument naming the variable when it
/// is not a comma-separated list of indices (e.g. GPU UUIDs or MIG names) or names a GPU the host
/// lacks.
gpu_allocation allocated_gpus(const std::vector<int>& host, const env_lookup& env = process_env);

}  // namespace pk::scheduler
