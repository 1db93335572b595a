#include "agent/workspace.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "config/read_file.h"
#include "config/sha256.h"

namespace pk::agent {

void copy_workspace(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(from))
    throw std::runtime_error(fmt::format("{}: the task's workspace is not a directory", from.string()));
  fs::remove_all(to);
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

std::string task_hash(const std::string& text, const std::filesystem::path& workspace) {
  namespace fs = std::filesystem;
  sha256 digest;
  auto add = [&](const std::string& s) {
    // Length-prefixed, so ("ab","c") and ("a","bc") differ.
    digest.update(std::to_string(s.size()) + ":");
    digest.update(s);
  };
  add(text);
  std::vector<fs::path> files;
  if (fs::is_directory(workspace))
    for (const auto& e : fs::recursive_directory_iterator(workspace))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    add(fs::relative(f, workspace).string());
    add(read_file(f, "the task's workspace file"));
  }
  return digest.hex();
}

}  // namespace pk::agent
