#pragma once
// Waiting for a killed process group to be gone. SIGKILL is delivered asynchronously: a killed
// process can run on for a moment after kill() returns (longer on a loaded host, or while the driver
// tears down a GPU context), so "we sent SIGKILL" is not yet "nothing of the command is left".

#include <sys/types.h>

#include <chrono>

namespace pk::sandbox {

/// Whether a process other than a zombie has process group id `pgid` (read from /proc).
bool group_has_live_process(pid_t pgid);

/// Returns once no live process is left in group `pgid`, true; false when `limit` passed first.
bool wait_for_group_exit(pid_t pgid, std::chrono::milliseconds limit);

}  // namespace pk::sandbox
