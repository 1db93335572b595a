#include "agent/run/scheduler/host_gpus.h"

#include <algorithm>
#include <string>
#include <system_error>

namespace pk::scheduler {

std::vector<int> detect_host_gpus(const std::filesystem::path& dev) {
  std::vector<int> gpus;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dev, ec)) {
    auto name = entry.path().filename().string();
    constexpr std::string_view prefix = "nvidia";
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    auto digits = name.substr(prefix.size());
    if (digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;  // nvidiactl, nvidia-uvm, nvidia-caps ...
    gpus.push_back(std::stoi(digits));
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace pk::scheduler
