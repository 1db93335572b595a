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
/// Where preloaded libraries appear inside: in the sealed root, so nothing inside can move them.
inline const std::filesystem::path preload_dir_inside = "/.pkagent";
/// Where the host's /etc appears when /etc itself is rebuilt for a preload (at the same depth as
/// /etc, so relative links inside it still resolve).
inline const std::filesystem::path host_etc_inside = "/.host-etc";

struct filesystem_layout {
  std::filesystem::path workspace;       ///< host directory, bound read-write at /workspace
  std::filesystem::path home;            ///< the hidden home directory ($HOME inside)
  std::uint64_t tmp_bytes = 0;           ///< size of /tmp; 0 = tmpfs default
  std::vector<bind_mount> binds;         ///< the spec's extra mounts
  std::vector<std::filesystem::path> hidden;  ///< host directories shown empty (tmpfs)
  std::filesystem::path host_root = "/"; ///< tests may point this at a fake root
  /// Libraries every dynamically linked process inside loads first, whatever its environment
  /// (the GPU multicast guard): each is bound read-only into preload_dir_inside and named in
  /// /etc/ld.so.preload, which bwrap reads from descriptor preload_list_fd (its text:
  /// ld_so_preload_text). /etc is then a read-only directory of links into the host's /etc
  /// (bound at host_etc_inside), since no file can be added to a read-only bind of the host's own.
  std::vector<std::filesystem::path> preload;
  int preload_list_fd = -1;
};

/// Host paths not shown inside as they are on the host (replaced, or shown empty): /tmp, /root,
/// /run, /proc, /dev, /workspace, `home` and `hidden`. A host file under one is seen inside only
/// through a bind.
std::vector<std::filesystem::path> hidden_host_paths(const std::filesystem::path& home,
                                                     const std::vector<std::filesystem::path>& hidden);

/// The bwrap arguments, in order. Throws sandbox_error for a missing workspace, bind source or
/// preload library.
std::vector<std::string> filesystem_args(const filesystem_layout& layout);

/// /etc/ld.so.preload inside: the layout's preload libraries, then the host's own entries.
std::string ld_so_preload_text(const filesystem_layout& layout);

}  // namespace pk::sandbox
