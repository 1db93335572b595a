// Test helper: counts live host processes whose command line contains a marker (tests start
// `sleep` with a unique duration and then check that none is left).
#pragma once

#include <cctype>
#include <filesystem>
#include <string>

#include "config/read_file.h"

namespace pk::sandbox::testing {

inline int count_host_processes(const std::string& marker) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    // A process may exit between the listing and the read: its files are gone, which is no error.
    const std::string stat = try_read_file(entry.path() / "stat").value_or("");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || stat.size() < paren + 3 || stat[paren + 2] == 'Z') continue;
    if (try_read_file(entry.path() / "cmdline").value_or("").find(marker) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace pk::sandbox::testing
