#include "sandbox/gpu_devices.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/read_file.h"
#include "sandbox/spec.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

namespace {

// A whole non-negative decimal number, or nullopt.
std::optional<int> parse_index(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v < 0) return std::nullopt;
  return v;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The value of "Key:   value" in the driver's information file, or empty.
std::string field(const std::string& information, std::string_view key) {
  std::istringstream in(information);
  for (std::string line; std::getline(in, line);) {
    const std::string_view l = line;
    if (l.size() > key.size() && l.substr(0, key.size()) == key && l[key.size()] == ':')
      return std::string(trim(l.substr(key.size() + 1)));
  }
  return {};
}

// The numbered /dev/nvidiaN nodes (not nvidiactl, nvidia-uvm, nvidia-caps ...), by minor.
std::vector<int> device_node_minors(const fs::path& dev) {
  std::vector<int> minors;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev, ec)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view prefix = "nvidia";
    if (name.size() <= prefix.size() || name.size() > prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0)
      continue;
    if (auto minor = parse_index(std::string_view(name).substr(prefix.size()))) minors.push_back(*minor);
  }
  std::sort(minors.begin(), minors.end());
  return minors;
}

}  // namespace

std::vector<host_gpu> list_host_gpus(const gpu_host_paths& paths) {
  std::vector<host_gpu> gpus;
  std::error_code ec;
  std::vector<std::string> buses;
  for (const auto& entry : fs::directory_iterator(paths.driver_gpus, ec)) buses.push_back(entry.path().filename());
  std::sort(buses.begin(), buses.end());
  for (const auto& bus : buses) {
    const int index = static_cast<int>(gpus.size());
    const std::string information = try_read_file(paths.driver_gpus / bus / "information").value_or("");
    gpus.push_back({index, parse_index(field(information, "Device Minor")).value_or(index), bus,
                    field(information, "Model")});
  }
  if (gpus.empty()) {  // no driver information: the device nodes themselves
    for (int minor : device_node_minors(paths.dev)) gpus.push_back({static_cast<int>(gpus.size()), minor, "", ""});
  }
  return gpus;
}

std::vector<int> host_gpu_indices(const gpu_host_paths& paths) {
  std::vector<int> indices;
  for (const host_gpu& g : list_host_gpus(paths)) indices.push_back(g.index);
  return indices;
}

int visible_gpu_count(int host_gpus, const char* value) {
  if (value == nullptr) return host_gpus;
  int visible = 0;
  std::set<int> seen;
  std::istringstream in(value);
  for (std::string token; visible < host_gpus && std::getline(in, token, ',');) {
    const std::string_view t = trim(token);
    if (t.rfind("GPU-", 0) == 0 || t.rfind("MIG-", 0) == 0) {
      ++visible;  // a UUID: the driver knows which GPU, this count only that it is one
      continue;
    }
    const auto index = parse_index(t);
    if (!index || *index >= host_gpus || !seen.insert(*index).second) break;
    ++visible;
  }
  return visible;
}

int visible_gpu_count(const gpu_host_paths& paths) {
  return visible_gpu_count(static_cast<int>(list_host_gpus(paths).size()), std::getenv("CUDA_VISIBLE_DEVICES"));
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
