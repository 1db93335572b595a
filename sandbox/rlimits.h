// Per-process resource limits of a sandboxed command, set on bwrap before exec and inherited
// by everything inside. Never RLIMIT_AS: CUDA reserves virtual address space of about twice
// the device memory, so an address-space cap breaks every GPU program. Memory is capped by the
// cgroup instead (cgroup.h).
#pragma once

#include <vector>

#include "sandbox/process.h"
#include "sandbox/spec.h"

namespace pk::sandbox {

/// RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE for the non-zero limits, and RLIMIT_NPROC for
/// `limits.processes` when `nproc_fallback` (no pids cgroup; inside a user namespace the
/// kernel counts processes per namespace, so the host's own processes do not count).
std::vector<rlimit_setting> rlimits_for(const limits& limits, bool nproc_fallback);

}  // namespace pk::sandbox
