// The host's GPUs, in one place: which GPUs exist (for the scheduler, the evaluator and the
// transcript's host facts) and how to lend some of them to a sandbox.
//
// Host GPU indices are nvidia-smi's (PCI bus order). The driver's device minor of each GPU is
// read from /proc/driver/nvidia/gpus/<pci>/information, since minors need not follow PCI order.
// Lending: only the device nodes of the listed GPUs (plus the shared control nodes) are
// --dev-bind'ed, so CUDA inside sees exactly those GPUs and no others. Inside, CUDA numbers the
// visible GPUs 0..k-1, so CUDA_VISIBLE_DEVICES must be "0,..,k-1" (a host index such as "1"
// would hide the only device), with CUDA_DEVICE_ORDER=PCI_BUS_ID so that inside index i is the
// i-th listed GPU in host order.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace pk::sandbox {

/// One host GPU as the driver describes it.
struct host_gpu {
  int index = 0;        ///< nvidia-smi index (position in PCI bus order)
  int minor = 0;        ///< /dev/nvidia<minor>
  std::string pci_bus;  ///< e.g. "0000:07:00.0"; empty when only the device node is known
  std::string model;    ///< e.g. "NVIDIA H200"; empty when only the device node is known
};

/// Where the driver's files are; tests point these at a fake tree.
struct gpu_host_paths {
  std::filesystem::path dev = "/dev";
  std::filesystem::path driver_gpus = "/proc/driver/nvidia/gpus";
};

/// The host's GPUs in index order, from the driver's per-GPU information files; where those are
/// missing (a container without /proc/driver/nvidia), from the numbered /dev/nvidiaN nodes in
/// minor order. Empty without the NVIDIA driver. CUDA_VISIBLE_DEVICES plays no part: these are
/// the GPUs that leases and --gpus name.
std::vector<host_gpu> list_host_gpus(const gpu_host_paths& paths = {});

/// The indices of list_host_gpus(paths), ascending: the GPUs the scheduler leases.
std::vector<int> host_gpu_indices(const gpu_host_paths& paths = {});

/// How many GPUs CUDA in this process can use: the host's GPUs narrowed by CUDA_VISIBLE_DEVICES.
int visible_gpu_count(const gpu_host_paths& paths = {});

/// visible_gpu_count for a host with `host_gpus` GPUs and CUDA_VISIBLE_DEVICES set to `value`
/// (nullptr: unset, all GPUs). Read as CUDA reads it: a comma-separated list of indices or
/// GPU-/MIG- UUIDs whose first invalid entry (out of range, negative, repeated, not a number)
/// hides itself and all after it; empty hides every GPU.
int visible_gpu_count(int host_gpus, const char* value);

struct gpu_binding {
  std::vector<std::string> bwrap_args;  ///< --dev-bind pairs for the device nodes
  std::map<std::string, std::string> env;  ///< CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER
};

/// The binding for `gpus` (host indices, in the order inside devices 0..k-1 should take;
/// duplicates refused). Empty for no GPUs. Throws
/// sandbox_error naming the GPUs that exist when one is missing.
gpu_binding bind_gpus(const std::vector<int>& gpus, const gpu_host_paths& paths = {});

}  // namespace pk::sandbox
