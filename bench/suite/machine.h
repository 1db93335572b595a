// The machine an episode's ranks run on, as its task states it and its bounds use it: the GPUs it
// leases (model, count, links), read from the driver, and the hardware spec of config/hardware whose
// model and GPU count match them. When none matches there is no spec: a bound computed for another
// machine would mislead the model and the report.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_kind.h"
#include "bench/suite/hardware_spec.h"
#include "sandbox/gpu_devices.h"
#include "sandbox/gpu_topology.h"

namespace pk::bench {

struct machine {
  device_kind device = default_device;
  int gpu_count = 0;      ///< GPUs of one lease (the world size); 0 on CPU
  std::string gpu_model;  ///< the driver's name ("NVIDIA H200"); models joined by " / " when they differ
  std::string links;      ///< sandbox::describe_links of the GPUs leases draw from; "" for one GPU
  std::optional<hardware_spec> spec;  ///< the figures for bounds; none when no spec matches
  std::filesystem::path spec_file;

  /// One line: "1 x NVIDIA H200 (one GPU, no links)", "2 x NVIDIA H200, linked by NV18",
  /// "no GPU: the ranks run on CPU (gloo)".
  std::string summary() const;
  /// Why there is no spec, for the task and the run's messages ("" when there is one).
  std::string missing_spec() const;
};

/// Whether `spec` describes `count` GPUs of the driver's `model`: the same count, and its gpu equal to
/// `model` (case aside) once a trailing note in parentheses ("(SXM5)") is left out.
bool spec_matches(const hardware_spec& spec, const std::string& model, int count);

/// The first spec of `dir` (*.toml in name order) that matches; nullopt when none does.
std::optional<std::filesystem::path> matching_spec(const std::string& model, int count,
                                                   const std::filesystem::path& dir);

/// config/hardware of the data tree.
std::filesystem::path hardware_spec_dir();

/// The machine of an episode at `world` ranks on `device`: on CUDA the models of `host`'s GPUs among
/// `leasable` (host indices), their links in `topology`, and the matching spec of `spec_dir`.
machine describe_machine(device_kind device, int world, const std::vector<sandbox::host_gpu>& host,
                         const std::vector<int>& leasable, const sandbox::gpu_topology& topology,
                         const std::filesystem::path& spec_dir);

/// describe_machine with this host's driver (list_host_gpus, `nvidia-smi topo -m`) and config/hardware.
machine detect_machine(device_kind device, int world, const std::vector<int>& leasable);

/// `m` with the figures of `file` in place of the matched ones (the user's --hardware).
machine with_spec(machine m, const std::filesystem::path& file);

}  // namespace pk::bench
