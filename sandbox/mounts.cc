#include "sandbox/mounts.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace pk::sandbox {

namespace fs = std::filesystem;

namespace {

// Top-level host entries the sandbox replaces rather than shows.
const std::set<std::string> replaced = {"proc", "dev", "tmp", "run", "root", "workspace"};

// The home directory gets a tmpfs of its own unless it is / (that would hide everything) or /root
// (replaced anyway).
bool home_gets_its_own_tmpfs(const fs::path& home) { return !home.empty() && home != "/root" && home != "/"; }

// A host path as bwrap must get it: absolute, since bwrap resolves a relative one after it has left
// the caller's directory.
std::string host_path(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

// /etc as a fresh directory in the sealed root: a link per host entry into the host's /etc
// (bound read-only at host_etc_inside), a host link copied as it is (a relative one resolves
// from /etc as on the host), and ld.so.preload from its descriptor.
void rebuilt_etc(const filesystem_layout& layout, std::vector<std::string>& args) {
  const fs::path host_etc = layout.host_root / "etc";
  std::error_code ec;
  if (fs::is_directory(host_etc, ec)) args.insert(args.end(), {"--ro-bind", host_etc.string(), host_etc_inside.string()});
  args.insert(args.end(), {"--dir", "/etc"});
  for (const auto& entry : sorted_entries(host_etc)) {
    const std::string name = entry.filename();
    if (name == "ld.so.preload") continue;  // its entries are in ld_so_preload_text
    const std::string target =
        fs::is_symlink(entry, ec) ? fs::read_symlink(entry, ec).string() : (host_etc_inside / name).string();
    args.insert(args.end(), {"--symlink", target, "/etc/" + name});
  }
  args.insert(args.end(),
              {"--perms", "0444", "--ro-bind-data", std::to_string(layout.preload_list_fd), "/etc/ld.so.preload"});
  for (const auto& library : layout.preload) {
    if (!fs::is_regular_file(library, ec)) {
      throw sandbox_error(fmt::format("preload library {} does not exist", library.string()));
    }
    args.insert(args.end(), {"--ro-bind", library.string(), (preload_dir_inside / library.filename()).string()});
  }
}

}  // namespace

std::string ld_so_preload_text(const filesystem_layout& layout) {
  std::string text;
  for (const auto& library : layout.preload) text += (preload_dir_inside / library.filename()).string() + "\n";
  std::ifstream host(layout.host_root / "etc" / "ld.so.preload");
  std::stringstream host_text;
  host_text << host.rdbuf();
  return text + host_text.str();
}

std::vector<fs::path> hidden_host_paths(const fs::path& home, const std::vector<fs::path>& hidden) {
  std::vector<fs::path> paths;
  for (const auto& name : replaced) paths.push_back(fs::path("/") / name);
  if (home_gets_its_own_tmpfs(home)) paths.push_back(home);
  paths.insert(paths.end(), hidden.begin(), hidden.end());
  return paths;
}

std::vector<std::string> filesystem_args(const filesystem_layout& layout) {
  std::error_code ec;
  if (!fs::is_directory(layout.workspace, ec)) {
    throw sandbox_error(fmt::format("workspace {} is not a directory; create it or pass --workspace DIR",
                                    layout.workspace.string()));
  }
  std::vector<std::string> args;
  auto add = [&](std::initializer_list<std::string> more) { args.insert(args.end(), more); };

  for (const auto& entry : sorted_entries(layout.host_root)) {
    const std::string name = entry.filename();
    if (replaced.count(name) || (name == "etc" && !layout.preload.empty())) continue;
    const std::string inside = "/" + name;
    if (fs::is_symlink(entry, ec)) {
      add({"--symlink", fs::read_symlink(entry, ec).string(), inside});
    } else {
      add({"--ro-bind", entry.string(), inside});
    }
  }
  if (!layout.preload.empty()) rebuilt_etc(layout, args);
  add({"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"});
  if (layout.tmp_bytes > 0) add({"--size", std::to_string(layout.tmp_bytes)});
  add({"--tmpfs", "/tmp", "--tmpfs", "/root"});
  if (home_gets_its_own_tmpfs(layout.home)) {
    add({"--tmpfs", layout.home.string()});
  }
  for (const auto& h : layout.hidden)
    if (fs::is_directory(h, ec)) add({"--tmpfs", host_path(h)});
  add({"--bind", host_path(layout.workspace), workspace_inside.string()});
  for (const auto& b : layout.binds) {
    if (!fs::exists(b.host, ec)) {
      throw sandbox_error(fmt::format("bind mount source {} does not exist", b.host.string()));
    }
    add({b.writable ? "--bind" : "--ro-bind", host_path(b.host), b.inside.string()});
  }
  add({"--remount-ro", "/", "--chdir", workspace_inside.string()});
  return args;
}

}  // namespace pk::sandbox
