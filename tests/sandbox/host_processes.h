// Test helper: counts live host processes whose command line contains a marker (tests start
// `sleep` with a unique duration and then check that none is left).
#pragma once

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace pk::sandbox::testing {

inline int count_host_processes(const std::string& marker) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || stat.size() < paren + 3 || stat[paren + 2] == 'Z') continue;
    std::ifstream cmd_file(entry.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(cmd_file)), {});
    if (cmd.find(marker) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace pk::sandbox::testing
