// The sandbox's filesystem, as bwrap arguments: the host read-only, the workspace read-write
// at /workspace, a private size-capped /tmp, $HOME and /root behind empty tmpfs, a fresh /proc,
// a minimal /dev, /run emptied (it holds host sockets and secrets).
//
// The new root is bwrap's tmpfs with every top-level host entry bound read-only into it (a
// plain --ro-bind / / would leave no place to create /workspace), then remounted read-only, so
// writing anywhere but /workspace, /tmp and $HOME fails.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/spec.h"

namespace pk::sandbox {

/// Where the workspace appears inside.
inline const std::filesystem::path workspace_inside = "/workspace";

struct filesystem_layout {
  std::filesystem::path workspace;       ///< host directory, bound read-write at /workspace
  std::filesystem::path home;            ///< the hidden home directory ($HOME inside)
  std::uint64_t tmp_bytes = 0;           ///< size of /tmp; 0 = tmpfs default
  std::vector<bind_mount> binds;         ///< the spec's extra mounts
  std::vector<std::filesystem::path> hidden;  ///< host directories shown empty (tmpfs)
  std::filesystem::path host_root = "/"; ///< tests may point this at a fake root
};

/// The bwrap arguments, in order. Throws sandbox_error for a missing workspace or bind source.
std::vector<std::string> filesystem_args(const filesystem_layout& layout);

}  // namespace pk::sandbox
