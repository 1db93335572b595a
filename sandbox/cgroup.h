// A cgroup per sandboxed command: memory and process-count limits the kernel enforces on
// everything inside, and, afterwards, whether the OOM killer struck and how much CPU was used.
//
// Hosts differ: the GPU host has the unified (v2) hierarchy with memory and pids controllers;
// our CI host has a hybrid layout where memory, pids, cpuacct and freezer live in v1 hierarchies
// and v2 holds none of them. detect_cgroups() reads /proc/self/mountinfo and /proc/self/cgroup and
// picks, per controller, the hierarchy that actually has it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pk::sandbox {

/// Where cgroups for sandboxes can be created on this host.
struct cgroup_layout {
  /// v2: a directory whose children get the memory and pids controllers.
  std::optional<std::filesystem::path> v2_parent;
  /// v1: controller name ("memory", "pids", "cpuacct", "freezer") -> the parent directory in its hierarchy.
  std::map<std::string, std::filesystem::path> v1_parents;
  /// Why a controller is missing, for notes ("no memory controller: ...").
  std::string problem;

  bool has_memory() const { return v2_parent.has_value() || v1_parents.count("memory") > 0; }
  bool has_pids() const { return v2_parent.has_value() || v1_parents.count("pids") > 0; }
  /// v2's cgroup.freeze is in every cgroup but the root; v1 needs the freezer hierarchy.
  bool has_freezer() const { return v2_parent.has_value() || v1_parents.count("freezer") > 0; }
  std::string describe() const;
};

/// Probes the host once (cached); never throws.
const cgroup_layout& detect_cgroups();

/// The cgroup(s) of one sandboxed command; removed (after killing any leftover) on destruction.
class sandbox_cgroup {
 public:
  /// Creates cgroups under `layout` with the given limits (0 = unlimited). Returns nullptr and
  /// sets `why_not` when no usable controller exists or creation fails (e.g. not root).
  static std::unique_ptr<sandbox_cgroup> create(const cgroup_layout& layout, std::uint64_t memory_bytes,
                                                std::uint64_t max_processes, std::string& why_not);
  ~sandbox_cgroup();
  sandbox_cgroup(const sandbox_cgroup&) = delete;
  sandbox_cgroup& operator=(const sandbox_cgroup&) = delete;

  /// Files the child writes its pid to (process_spec::join_files).
  std::vector<std::filesystem::path> join_files() const;
  bool limits_memory() const { return memory_limited_; }
  bool limits_processes() const { return pids_limited_; }
  /// The OOM killer killed something in this cgroup.
  bool oom_killed() const;
  /// CPU time of everything that ran inside; nullopt without a CPU accounting controller.
  std::optional<double> cpu_seconds() const;
  bool can_freeze() const { return v2_dir_.has_value() || v1_freezer_.has_value(); }
  /// Stops (true) or continues (false) every process inside at once. Returns without waiting: a
  /// process stops at its next return to user space, as with SIGSTOP, but the kernel also
  /// freezes every child forked meanwhile, which signals to known pids cannot. False when this
  /// cgroup has no freezer or the write failed.
  bool freeze(bool frozen);

 private:
  sandbox_cgroup() = default;
  std::vector<std::filesystem::path> dirs_;  ///< every directory created, for join and cleanup
  std::optional<std::filesystem::path> v2_dir_, v1_memory_, v1_cpuacct_, v1_freezer_;
  bool memory_limited_ = false, pids_limited_ = false;
  int freeze_fd_ = -1;  ///< kept open: the judge freezes and thaws a set hundreds of times a second
};

}  // namespace pk::sandbox
