// The sandbox's types, as plain data: what to run under (spec, limits, mounts), how it is run
// (plan) and how it ended (result). plan.h turns a spec into a plan; sandbox.h executes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/output_capture.h"  // captured_output
#include "sandbox/live_group.h"
#include "sandbox/process.h"         // rlimit_setting

namespace pk::sandbox {

/// The sandbox could not be created (not: the command failed). The message names the fix.
class sandbox_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class isolation {
  bwrap,  ///< the default: bubblewrap namespaces + seccomp + limits
  none,   ///< explicit --sandbox=none: limits and timeouts only, with a warning on every command
};

struct limits {
  std::chrono::milliseconds wall{300'000};  ///< wall-clock timeout; 0 = none
  std::uint64_t cpu_seconds = 0;            ///< RLIMIT_CPU; 0 = none
  std::uint64_t file_size_bytes = 0;        ///< RLIMIT_FSIZE; 0 = none
  std::uint64_t open_files = 0;             ///< RLIMIT_NOFILE; 0 = inherit
  std::uint64_t processes = 0;              ///< pids (cgroup pids.max or RLIMIT_NPROC); 0 = none
  std::uint64_t memory_bytes = 0;           ///< cgroup memory limit; 0 = none
  std::uint64_t tmp_bytes = 0;              ///< size of the private /tmp; 0 = tmpfs default
  std::uint64_t output_bytes = 1 << 20;     ///< cap per stream, kept as head + tail
};

/// An extra bind mount, e.g. the evaluator read-only or the pkb Unix socket.
struct bind_mount {
  std::filesystem::path host;
  std::filesystem::path inside;
  bool writable = false;
};

struct spec {
  std::filesystem::path workspace;         ///< bound read-write at /workspace (the cwd); required
  std::vector<int> gpus;                   ///< host GPU indices; empty = no NVIDIA device visible
  /// Load the multicast guard (gpu_guard.h) into every process even without GPUs: a judge's
  /// candidate set runs under the same guard on every device. With GPUs it is always loaded.
  bool multicast_guard = false;
  struct limits limits;
  std::vector<bind_mount> binds;           ///< extra mounts, applied after the defaults
  /// Host directories shown empty inside (a tmpfs over each; binds into them still apply): the
  /// source tree, caches and run directories that code in the sandbox must not read.
  std::vector<std::filesystem::path> hidden;
  /// Bind back, read-only, the directories this process loaded its shared libraries from where
  /// the sandbox hides them (own_libraries.h): for a command that runs pkagent itself.
  bool own_libraries = false;
  std::map<std::string, std::string> env;  ///< extra variables on top of the whitelist
  enum isolation isolation = isolation::bwrap;
  std::string stdin_data;                  ///< fed to the command's stdin (closed after)
  std::stop_token stop;                    ///< a stop request kills the sandbox and all inside it
  /// Set to stop and continue everything inside while it runs (live_group.h); may be null.
  std::shared_ptr<live_group> live;
};

struct result {
  /// The command's exit code. A command killed by a signal inside the sandbox reads 128+N
  /// here, as in a shell (bwrap reports it so); -1 when the sandbox itself was killed.
  int exit_code = -1;
  int signal = 0;             ///< the signal that killed the sandbox (timeout: SIGKILL), else 0
  bool timed_out = false;     ///< killed at limits.wall
  bool oom_killed = false;    ///< killed by the memory cgroup
  double wall_seconds = 0;
  double cpu_seconds = 0;     ///< user + system of everything inside (from its cgroup, where one exists)
  captured_output out;
  captured_output err;
  std::string note;           ///< the sandbox's own remark (e.g. "memory limit not enforced: ...")

  bool ok() const { return exit_code == 0 && !timed_out && !oom_killed; }
  /// The exit status `pkagent sandbox` mirrors: 124 on timeout, 128+signal, else exit_code.
  int shell_status() const;
};

/// The executable form of a spec: the full argv (bwrap ... -- bash -lc LINE, or bwrap ... -- ARGV)
/// and environment.
struct plan {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::filesystem::path cwd;  ///< where argv starts on the host (bwrap then enters /workspace)
  /// Data the command reads from inherited descriptors: {fd number, bytes} (the seccomp BPF
  /// program and the login profile that restores PATH after /etc/profile).
  std::vector<std::pair<int, std::string>> fd_data;
  std::vector<rlimit_setting> rlimits;
  std::vector<std::string> warnings;  ///< to be shown with every command (--sandbox=none)
};

}  // namespace pk::sandbox
