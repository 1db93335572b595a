#include "sandbox/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

namespace {

struct mount_entry {
  fs::path mountpoint;
  std::string fstype;
  std::vector<std::string> super_options;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool write_text(const fs::path& file, const std::string& text, std::string* error = nullptr) {
  std::ofstream out(file);
  out << text << std::flush;
  if (out) return true;
  if (error) *error = fmt::format("writing '{}' to {} failed: {}", text, file.string(), std::strerror(errno));
  return false;
}

/// The value after `key ` on its own line of a flat-keyed file (memory.events, cpu.stat ...).
std::optional<std::uint64_t> keyed_value(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string k; in >> k;) {
    std::uint64_t v = 0;
    if (!(in >> v)) return std::nullopt;
    if (k == key) return v;
  }
  return std::nullopt;
}

std::vector<mount_entry> cgroup_mounts() {
  // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
  std::vector<mount_entry> mounts;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    auto fields = split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || std::distance(dash, fields.end()) < 4) continue;
    const std::string& fstype = dash[1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    mounts.push_back({fields[4], fstype, split(dash[3], ',')});
  }
  return mounts;
}

/// /proc/self/cgroup: hierarchy controllers ("" for v2) -> our path in it.
std::vector<std::pair<std::vector<std::string>, std::string>> own_cgroups() {
  std::vector<std::pair<std::vector<std::string>, std::string>> out;
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    out.emplace_back(split(line.substr(first + 1, second - first - 1), ','), line.substr(second + 1));
  }
  return out;
}

fs::path under_mount(const fs::path& mountpoint, const std::string& own_path) {
  fs::path dir = mountpoint / fs::path(own_path).relative_path();
  std::error_code ec;
  return fs::is_directory(dir, ec) ? dir : mountpoint;
}

bool usable_v2_parent(const fs::path& dir) {
  if (::access(dir.c_str(), W_OK) != 0) return false;
  const auto available = split(try_read_file(dir / "cgroup.controllers").value_or(""), ' ');
  auto has = [&](const std::string& c) {
    return std::any_of(available.begin(), available.end(), [&](const std::string& a) { return a.rfind(c, 0) == 0; });
  };
  if (!has("memory") || !has("pids")) return false;
  const std::string enabled = try_read_file(dir / "cgroup.subtree_control").value_or("");
  if (enabled.find("memory") != std::string::npos && enabled.find("pids") != std::string::npos) return true;
  // Fails with EBUSY where the cgroup holds processes itself (the "no internal processes" rule).
  return write_text(dir / "cgroup.subtree_control", "+memory +pids");
}

cgroup_layout probe() {
  cgroup_layout layout;
  const auto mounts = cgroup_mounts();
  const auto own = own_cgroups();
  std::vector<std::string> problems;

  for (const auto& m : mounts) {
    if (m.fstype != "cgroup2") continue;
    std::string own_path = "/";
    for (const auto& [controllers, path] : own) {
      if (controllers.empty() || (controllers.size() == 1 && controllers[0].empty())) own_path = path;
    }
    for (const fs::path& candidate : {under_mount(m.mountpoint, own_path), m.mountpoint}) {
      if (usable_v2_parent(candidate)) {
        layout.v2_parent = candidate;
        return layout;
      }
    }
    problems.push_back(fmt::format("cgroup v2 at {} offers no writable memory+pids subtree", m.mountpoint.string()));
  }
  for (const std::string controller : {"memory", "pids", "cpuacct", "freezer"}) {
    for (const auto& m : mounts) {
      if (m.fstype != "cgroup" || !contains(m.super_options, controller)) continue;
      std::string own_path = "/";
      for (const auto& [controllers, path] : own) {
        if (contains(controllers, controller)) own_path = path;
      }
      const fs::path parent = under_mount(m.mountpoint, own_path);
      if (::access(parent.c_str(), W_OK) == 0) {
        layout.v1_parents[controller] = parent;
      } else {
        problems.push_back(fmt::format("cgroup v1 {} at {} is not writable", controller, parent.string()));
      }
      break;
    }
  }
  if (!layout.has_memory() && problems.empty()) problems.push_back("no cgroup memory controller is mounted");
  for (const auto& p : problems) layout.problem += (layout.problem.empty() ? "" : "; ") + p;
  return layout;
}

std::string unique_name() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("pkagent-{}-{}", ::getpid(), counter++);
}

}  // namespace

std::string cgroup_layout::describe() const {
  if (v2_parent) return fmt::format("cgroup v2 under {}", v2_parent->string());
  if (v1_parents.empty()) return fmt::format("no usable cgroup ({})", problem);
  std::string text = "cgroup v1";
  for (const auto& [controller, dir] : v1_parents) text += fmt::format(" {}={}", controller, dir.string());
  return text;
}

const cgroup_layout& detect_cgroups() {
  static std::once_flag once;
  static cgroup_layout layout;
  std::call_once(once, [] { layout = probe(); });
  return layout;
}

std::unique_ptr<sandbox_cgroup> sandbox_cgroup::create(const cgroup_layout& layout, std::uint64_t memory_bytes,
                                                       std::uint64_t max_processes, std::string& why_not) {
  std::unique_ptr<sandbox_cgroup> cg(new sandbox_cgroup);
  const std::string name = unique_name();
  auto make = [&](const fs::path& parent) -> std::optional<fs::path> {
    fs::path dir = parent / name;
    std::error_code ec;
    if (!fs::create_directory(dir, ec)) {
      why_not = fmt::format("cannot create cgroup {}: {}", dir.string(), ec ? ec.message() : "exists");
      return std::nullopt;
    }
    cg->dirs_.push_back(dir);
    return dir;
  };
  std::string error;
  if (layout.v2_parent) {
    auto dir = make(*layout.v2_parent);
    if (!dir) return nullptr;
    cg->v2_dir_ = dir;
    if (memory_bytes > 0) {
      if (!write_text(*dir / "memory.max", std::to_string(memory_bytes), &error)) return why_not = error, nullptr;
      if (fs::exists(*dir / "memory.swap.max")) write_text(*dir / "memory.swap.max", "0");
      write_text(*dir / "memory.oom.group", "1");  // an OOM ends the whole command, not one victim
      cg->memory_limited_ = true;
    }
    if (max_processes > 0) {
      if (!write_text(*dir / "pids.max", std::to_string(max_processes), &error)) return why_not = error, nullptr;
      cg->pids_limited_ = true;
    }
    return cg;
  }
  if (layout.v1_parents.empty()) {
    why_not = layout.problem;
    return nullptr;
  }
  for (const auto& [controller, parent] : layout.v1_parents) {
    // v1 hierarchies are separate: join only those that limit or count something here.
    if ((controller == "memory" && memory_bytes == 0) || (controller == "pids" && max_processes == 0)) continue;
    auto dir = make(parent);
    if (!dir) return nullptr;
    if (controller == "memory") {
      cg->v1_memory_ = dir;
      if (memory_bytes > 0) {
        if (!write_text(*dir / "memory.limit_in_bytes", std::to_string(memory_bytes), &error)) {
          return why_not = error, nullptr;
        }
        // Without this, a host with swap would let the command page out instead of being killed.
        if (fs::exists(*dir / "memory.memsw.limit_in_bytes")) {
          write_text(*dir / "memory.memsw.limit_in_bytes", std::to_string(memory_bytes));
        }
        cg->memory_limited_ = true;
      }
    } else if (controller == "pids" && max_processes > 0) {
      if (!write_text(*dir / "pids.max", std::to_string(max_processes), &error)) return why_not = error, nullptr;
      cg->pids_limited_ = true;
    } else if (controller == "cpuacct") {
      cg->v1_cpuacct_ = dir;
    } else if (controller == "freezer") {
      cg->v1_freezer_ = dir;
    }
  }
  return cg;
}

std::vector<fs::path> sandbox_cgroup::join_files() const {
  std::vector<fs::path> files;
  for (const auto& dir : dirs_) files.push_back(dir / "cgroup.procs");
  return files;
}

bool sandbox_cgroup::oom_killed() const {
  if (v2_dir_) return keyed_value(*v2_dir_ / "memory.events", "oom_kill").value_or(0) > 0;
  if (v1_memory_) return keyed_value(*v1_memory_ / "memory.oom_control", "oom_kill").value_or(0) > 0;
  return false;
}

std::optional<double> sandbox_cgroup::cpu_seconds() const {
  if (v2_dir_) {
    if (auto usec = keyed_value(*v2_dir_ / "cpu.stat", "usage_usec")) return static_cast<double>(*usec) / 1e6;
  }
  if (v1_cpuacct_) {
    std::ifstream in(*v1_cpuacct_ / "cpuacct.usage");
    std::uint64_t ns = 0;
    if (in >> ns) return static_cast<double>(ns) / 1e9;
  }
  return std::nullopt;
}

bool sandbox_cgroup::freeze(bool frozen) {
  if (freeze_fd_ < 0) {
    if (!can_freeze()) return false;
    const fs::path file = v2_dir_ ? *v2_dir_ / "cgroup.freeze" : *v1_freezer_ / "freezer.state";
    freeze_fd_ = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (freeze_fd_ < 0) return false;
  }
  const std::string_view word = v2_dir_ ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
  return ::pwrite(freeze_fd_, word.data(), word.size(), 0) == static_cast<ssize_t>(word.size());
}

sandbox_cgroup::~sandbox_cgroup() {
  // A v1-frozen process does not die of SIGKILL until it is thawed.
  if (v1_freezer_) freeze(false);
  if (freeze_fd_ >= 0) ::close(freeze_fd_);
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    const fs::path& dir = *it;
    if (fs::exists(dir / "cgroup.kill")) {
      write_text(dir / "cgroup.kill", "1");
    } else {
      std::ifstream procs(dir / "cgroup.procs");
      for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
    }
    // A cgroup whose last members are still being torn down refuses rmdir (EBUSY) briefly.
    for (int attempt = 0; attempt < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

}  // namespace pk::sandbox
