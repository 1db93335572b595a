// Lending GPUs to a sandbox: only the device nodes of the listed host GPUs (plus the shared
// control nodes) are --dev-bind'ed, so CUDA inside sees exactly those GPUs and no others.
//
// Host GPU indices are nvidia-smi's (PCI bus order). The driver's device minor of each GPU is
// read from /proc/driver/nvidia/gpus/<pci>/information, since minors need not follow PCI order.
// Inside, CUDA numbers the visible GPUs 0..k-1, so CUDA_VISIBLE_DEVICES must be "0,..,k-1" (a
// host index such as "1" would hide the only device), with CUDA_DEVICE_ORDER=PCI_BUS_ID so that
// inside index i is the i-th listed GPU in host order.
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
  std::string pci_bus;  ///< e.g. "0000:07:00.0"
};

/// Where the driver's files are; tests point these at a fake tree.
struct gpu_host_paths {
  std::filesystem::path dev = "/dev";
  std::filesystem::path driver_gpus = "/proc/driver/nvidia/gpus";
};

/// The host's GPUs in index order; empty without the NVIDIA driver.
std::vector<host_gpu> list_host_gpus(const gpu_host_paths& paths = {});

struct gpu_binding {
  std::vector<std::string> bwrap_args;  ///< --dev-bind pairs for the device nodes
  std::map<std::string, std::string> env;  ///< CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER
};

/// The binding for `gpus` (host indices, in the order inside devices 0..k-1 should take;
/// duplicates refused). Empty for no GPUs. Throws
/// sandbox_error naming the GPUs that exist when one is missing.
gpu_binding bind_gpus(const std::vector<int>& gpus, const gpu_host_paths& paths = {});

}  // namespace pk::sandbox
