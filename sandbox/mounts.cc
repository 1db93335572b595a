#include "sandbox/mounts.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace pk::sandbox {

namespace fs = std::filesystem;

std::vector<std::string> filesystem_args(const filesystem_layout& layout) {
  std::error_code ec;
  if (!fs::is_directory(layout.workspace, ec)) {
    throw sandbox_error(fmt::format("workspace {} is not a directory; create it or pass --workspace DIR",
                                    layout.workspace.string()));
  }
  std::vector<std::string> args;
  auto add = [&](std::initializer_list<std::string> more) { args.insert(args.end(), more); };

  // Entries the sandbox replaces rather than shows.
  const std::set<std::string> replaced = {"proc", "dev", "tmp", "run", "root", "workspace"};
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(layout.host_root, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& entry : entries) {
    const std::string name = entry.filename();
    if (replaced.count(name)) continue;
    const std::string inside = "/" + name;
    if (fs::is_symlink(entry, ec)) {
      add({"--symlink", fs::read_symlink(entry, ec).string(), inside});
    } else {
      add({"--ro-bind", entry.string(), inside});
    }
  }
  add({"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"});
  if (layout.tmp_bytes > 0) add({"--size", std::to_string(layout.tmp_bytes)});
  add({"--tmpfs", "/tmp", "--tmpfs", "/root"});
  if (!layout.home.empty() && layout.home != "/root" && layout.home != "/") {
    add({"--tmpfs", layout.home.string()});
  }
  for (const auto& h : layout.hidden)
    if (fs::is_directory(h, ec)) add({"--tmpfs", fs::absolute(h).lexically_normal().string()});
  add({"--bind", fs::absolute(layout.workspace).lexically_normal().string(), workspace_inside.string()});
  for (const auto& b : layout.binds) {
    if (!fs::exists(b.host, ec)) {
      throw sandbox_error(fmt::format("bind mount source {} does not exist", b.host.string()));
    }
    add({b.writable ? "--bind" : "--ro-bind", b.host.string(), b.inside.string()});
  }
  add({"--remount-ro", "/", "--chdir", workspace_inside.string()});
  return args;
}

}  // namespace pk::sandbox
