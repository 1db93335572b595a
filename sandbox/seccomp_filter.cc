#include "sandbox/seccomp_filter.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <seccomp.h>

#include "sandbox/spec.h"

namespace pk::sandbox {

namespace {

std::string build(const seccomp_options& options) {
  std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (!ctx) throw sandbox_error("seccomp_init failed: is libseccomp installed (apt-get install libseccomp2)?");
  auto check = [](int rc, const std::string& what) {
    if (rc < 0) throw sandbox_error(fmt::format("seccomp: {} failed: {}", what, std::strerror(-rc)));
  };
  for (const auto& name : refused_syscalls()) {
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0), "refusing " + name);
  }
  check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3 -> ENOSYS");
  for (unsigned long flag : {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                             CLONE_NEWCGROUP}) {
    check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                           SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
          "clone with namespace flags");
  }
  if (options.block_inet) {
    for (int family : {AF_INET, AF_INET6}) {
      check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family))),
            "refusing IP sockets");
    }
  }
  // Export through a memfd: libseccomp writes BPF to a descriptor only.
  const int fd = ::memfd_create("pkagent-seccomp", MFD_CLOEXEC);
  if (fd < 0) throw sandbox_error(fmt::format("memfd_create failed: {}", std::strerror(errno)));
  std::string program;
  const int rc = seccomp_export_bpf(ctx.get(), fd);
  if (rc == 0) {
    const off_t size = ::lseek(fd, 0, SEEK_END);
    program.resize(static_cast<std::size_t>(size > 0 ? size : 0));
    if (::pread(fd, program.data(), program.size(), 0) != static_cast<ssize_t>(program.size())) program.clear();
  }
  ::close(fd);
  check(rc, "exporting the BPF program");
  if (program.empty()) throw sandbox_error("seccomp: the exported BPF program is empty");
  return program;
}

}  // namespace

const std::vector<std::string>& refused_syscalls() {
  static const std::vector<std::string> names = {
      "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount", "umount2", "pivot_root", "chroot",
      "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
      "bpf", "perf_event_open", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
      "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "settimeofday", "clock_settime", "clock_adjtime",
      "adjtimex", "iopl", "ioperm", "keyctl", "add_key", "request_key", "userfaultfd", "open_by_handle_at",
      "name_to_handle_at", "lookup_dcookie", "vhangup", "uselib", "nfsservctl"};
  return names;
}

const std::string& seccomp_program(const seccomp_options& options) {
  static std::mutex mutex;
  static std::string programs[2];
  std::lock_guard lock(mutex);
  std::string& program = programs[options.block_inet ? 1 : 0];
  if (program.empty()) program = build(options);
  return program;
}

}  // namespace pk::sandbox
