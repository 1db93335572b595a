// The seccomp filter every sandboxed command runs under (handed to bwrap as --seccomp FD).
// It refuses, with EPERM, what a kernel-writing agent never needs and what could undo the
// sandbox: tracing other processes, mounting, new namespaces, loading BPF or kernel code,
// rebooting. clone3 gets ENOSYS (its flags cannot be inspected) so libc falls back to clone,
// whose namespace flags are checked. Foreign-architecture syscalls kill the process.
#pragma once

#include <string>
#include <vector>

namespace pk::sandbox {

struct seccomp_options {
  /// Also refuse AF_INET / AF_INET6 sockets: the fallback network isolation where no
  /// network namespace can be made (AF_UNIX keeps working).
  bool block_inet = false;
};

/// The syscalls refused outright, by name (documentation and tests).
const std::vector<std::string>& refused_syscalls();

/// The compiled BPF program for these options (cached). Throws sandbox_error if libseccomp
/// cannot build it.
const std::string& seccomp_program(const seccomp_options& options);

}  // namespace pk::sandbox
