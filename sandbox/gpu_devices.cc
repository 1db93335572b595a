#include "sandbox/gpu_devices.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sandbox/spec.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

std::vector<host_gpu> list_host_gpus(const gpu_host_paths& paths) {
  std::vector<host_gpu> gpus;
  std::error_code ec;
  std::vector<std::string> buses;
  for (const auto& entry : fs::directory_iterator(paths.driver_gpus, ec)) buses.push_back(entry.path().filename());
  std::sort(buses.begin(), buses.end());
  for (const auto& bus : buses) {
    host_gpu gpu{static_cast<int>(gpus.size()), static_cast<int>(gpus.size()), bus};
    std::ifstream info(paths.driver_gpus / bus / "information");
    for (std::string line; std::getline(info, line);) {
      if (line.rfind("Device Minor:", 0) == 0) gpu.minor = std::stoi(line.substr(line.find(':') + 1));
    }
    gpus.push_back(gpu);
  }
  if (gpus.empty()) {  // no driver information: fall back to the device nodes themselves
    for (int minor = 0; fs::exists(paths.dev / fmt::format("nvidia{}", minor), ec); ++minor) {
      gpus.push_back({minor, minor, ""});
    }
  }
  return gpus;
}

gpu_binding bind_gpus(const std::vector<int>& gpus, const gpu_host_paths& paths) {
  gpu_binding binding;
  if (gpus.empty()) return binding;
  const auto host = list_host_gpus(paths);
  std::vector<int> available;
  for (const auto& g : host) available.push_back(g.index);
  std::set<int> seen;
  std::vector<int> minors;
  for (int index : gpus) {
    if (!seen.insert(index).second) throw sandbox_error(fmt::format("GPU {} is listed twice in --gpus", index));
    if (index < 0 || index >= static_cast<int>(host.size())) {
      throw sandbox_error(available.empty()
                              ? fmt::format("GPU {} was requested, but this host has no NVIDIA GPU "
                                            "(no /dev/nvidia* and no {}); run without --gpus",
                                            index, paths.driver_gpus.string())
                              : fmt::format("GPU {} was requested, but this host has GPUs {}; pick from those",
                                            index, fmt::join(available, ",")));
    }
    minors.push_back(host[index].minor);
  }
  auto dev_bind = [&](const fs::path& node) {
    binding.bwrap_args.insert(binding.bwrap_args.end(), {"--dev-bind", node.string(), node.string()});
  };
  std::error_code ec;
  for (int minor : minors) dev_bind(paths.dev / fmt::format("nvidia{}", minor));
  for (const char* shared : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps"}) {
    if (fs::exists(paths.dev / shared, ec)) dev_bind(paths.dev / shared);
  }
  // Inside, CUDA (in PCI order) numbers the bound GPUs by their host order; listing them in the
  // caller's order makes inside device i the caller's i-th GPU.
  std::vector<int> sorted = gpus, inside;
  std::sort(sorted.begin(), sorted.end());
  for (int index : gpus) {
    inside.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), index) - sorted.begin()));
  }
  binding.env["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(inside, ","));
  binding.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  return binding;
}

}  // namespace pk::sandbox
