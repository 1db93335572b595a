// spec -> plan: every decision about how a command is isolated, as data. The host facts it
// depends on are explicit, so tests can plan for a host that has GPUs, lacks a network
// namespace, or has a different environment.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/gpu_devices.h"
#include "sandbox/gpu_guard.h"
#include "sandbox/spec.h"

namespace pk::sandbox {

/// Descriptor numbers the sandboxed bwrap reads its extra inputs from.
inline constexpr int seccomp_fd = 100;
inline constexpr int profile_fd = 101;
inline constexpr int ld_so_preload_fd = 102;

/// What make_plan reads from the host.
struct host_facts {
  env_map environment;                 ///< pkagent's environment (the whitelist picks from it)
  std::string bwrap;                   ///< path of bwrap; empty when not installed
  gpu_host_paths gpu_paths;
  std::filesystem::path root = "/";    ///< whose top-level entries become the read-only root
  bool network_namespace = true;       ///< false: seccomp refuses IP sockets instead
  bool pids_cgroup = true;             ///< false: RLIMIT_NPROC caps the process count instead
  /// Loaded first into every process given GPUs (gpu_guard.h).
  std::filesystem::path multicast_guard = multicast_guard_library();
  /// The shared objects pkagent has loaded (own_libraries.h), for spec::own_libraries.
  std::vector<std::filesystem::path> loaded_objects;

  /// This host, as it is now (cheap: no process is started).
  static host_facts current();
};

/// The plan for the shell command line `line` under `s`: `bash -lc LINE` in bwrap (`bash -c`
/// with --sandbox=none). Throws sandbox_error when isolation is impossible.
plan make_plan(const spec& s, const std::string& line, const host_facts& host);
plan make_plan(const spec& s, const std::string& line);

/// The plan for exec'ing `argv` as given (no shell) under `s`.
plan make_argv_plan(const spec& s, const std::vector<std::string>& argv, const host_facts& host);
plan make_argv_plan(const spec& s, const std::vector<std::string>& argv);

/// Runs a plan made for `s` (run() is make_plan for this host, then this).
result execute(const spec& s, const plan& p);

/// `text` as one POSIX shell word: in single quotes, each ' written as '\''.
std::string single_quoted(const std::string& text);

}  // namespace pk::sandbox
