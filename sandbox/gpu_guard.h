// NVLink multicast refused in every process that is given GPUs, at run time: the multicast guard
// (multicast_guard/, libpk_multicast_guard.so) is loaded first into each such process and refuses
// the CUDA driver's cuMulticast* entry points however they are reached, leaving one evidence line
// per refused call. A bwrap sandbox with GPUs gets it through its own /etc/ld.so.preload
// (make_plan does that); a process started without bwrap gets it through LD_PRELOAD
// (gpu_guard_env). See multicast_guard/README.md for the routes covered and the gaps.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/spec.h"

namespace pk::sandbox {

/// The guard library this build made. make_plan refuses GPUs when it is missing.
std::filesystem::path multicast_guard_library();

/// Where the guard inside a bwrap sandbox appends its evidence (its default log path).
std::filesystem::path guard_log_inside();

/// The variables that put the guard into a GPU process started without bwrap: LD_PRELOAD with
/// the guard first (then `ld_preload`, the entries the process would have had), the guard's log
/// file when `log_file` is not empty, and forced_environment() (multicast off in NCCL, torch and
/// NVSHMEM). Merge them into the process's environment last. A child that clears its environment
/// loses the guard here: only a bwrap sandbox keeps it (README).
env_map gpu_guard_env(const std::filesystem::path& log_file, const std::string& ld_preload = {},
                      const std::filesystem::path& library = multicast_guard_library());

/// For a bwrap sandbox with GPUs: `host_file` (created empty, replacing what was there) bound
/// writable where the guard inside appends (add it to spec::binds); read it after the run with
/// read_guard_log(host_file).
bind_mount guard_log_bind(const std::filesystem::path& host_file);

/// One line of the guard's log (format: multicast_guard/multicast_guard.h).
struct guard_event {
  std::string event;  ///< "refused", "resolved" or "masked"
  std::string entry;  ///< the driver entry point, e.g. "cuMulticastCreate"
  std::string route;  ///< "call", "dlsym", "dlvsym", "cuGetProcAddress", "cuGetProcAddress_v2" ...
  long pid = 0;
  std::string comm;   ///< the process's name
  std::string line;   ///< the line as written
};

struct guard_log {
  std::vector<guard_event> events;
  std::size_t ignored_lines = 0;  ///< lines not in the guard's format (the file is writable inside)
  bool truncated = false;         ///< longer than the cap; the rest was not read
  std::string problem;            ///< why the file could not be read (absent, not a regular file ...)

  /// The refused calls: a candidate's process reached a multicast entry point (verdict `forbidden`).
  std::vector<guard_event> refusals() const;
};

/// Reads the guard's log after everything that could write it has ended: without following a
/// link, a regular file only, at most `max_bytes`. Never throws for the file's contents.
guard_log read_guard_log(const std::filesystem::path& file, std::size_t max_bytes = 1 << 20);

/// The evidence for a verdict, one refusal per line: "cuMulticastCreate refused in pid 42 (python3)".
std::string describe_refusals(const std::vector<guard_event>& refusals);

}  // namespace pk::sandbox
