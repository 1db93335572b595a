// plan -> result: creates the command's cgroup, hands bwrap its inputs, runs it under the
// process runner and reads back what the kernel knows (OOM kills, CPU time).
#include "sandbox/sandbox.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "sandbox/cgroup.h"
#include "sandbox/plan.h"
#include "sandbox/process.h"

namespace pk::sandbox {

namespace fs = std::filesystem;

int result::shell_status() const {
  if (timed_out) return 124;
  if (signal != 0) return 128 + signal;
  return exit_code;
}

namespace {

/// A memfd holding `data`, read by the child through an inherited descriptor.
class data_fd {
 public:
  explicit data_fd(const std::string& data) : fd_(::memfd_create("pkagent-sandbox-data", MFD_CLOEXEC)) {
    if (fd_ < 0) throw sandbox_error(fmt::format("memfd_create failed: {}", std::strerror(errno)));
    if (::write(fd_, data.data(), data.size()) != static_cast<ssize_t>(data.size()) || ::lseek(fd_, 0, SEEK_SET) != 0) {
      ::close(fd_);
      throw sandbox_error(fmt::format("writing sandbox data to a memfd failed: {}", std::strerror(errno)));
    }
  }
  ~data_fd() { ::close(fd_); }
  data_fd(const data_fd&) = delete;
  data_fd& operator=(const data_fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct probe_outcome {
  std::optional<std::string> reason;  ///< set when no sandbox can be made
  bool network_namespace = true;
};

probe_outcome probe_bwrap() {
  probe_outcome out;
  host_facts facts = host_facts::current();
  if (facts.bwrap.empty()) {
    out.reason = "bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap, or run "
                 "scripts/install-deps), or run unsandboxed with --sandbox=none";
    return out;
  }
  auto attempt = [&](std::vector<std::string> unshare) {
    process_spec ps;
    ps.argv = {facts.bwrap};
    ps.argv.insert(ps.argv.end(), unshare.begin(), unshare.end());
    ps.argv.insert(ps.argv.end(), {"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                   "true"});
    ps.env = {{"PATH", "/usr/bin:/bin"}};
    ps.timeout = std::chrono::seconds(20);
    return run_process(ps);
  };
  const auto full = attempt({"--unshare-all"});
  if (full.ok()) return out;
  const auto without_net =
      attempt({"--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"});
  if (without_net.ok()) {
    out.network_namespace = false;
    return out;
  }
  out.reason = fmt::format(
      "bubblewrap cannot create namespaces here ({}). Fix: enable unprivileged user namespaces "
      "(sysctl -w kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; on Ubuntu 24.04 "
      "also kernel.apparmor_restrict_unprivileged_userns=0), run pkagent as root, or run unsandboxed with "
      "--sandbox=none",
      full.err.text.empty() ? fmt::format("exit status {}", full.shell_status()) : full.err.text.substr(0, 400));
  while (!out.reason->empty() && out.reason->back() == '\n') out.reason->pop_back();
  return out;
}

const probe_outcome& probe_once() {
  static std::once_flag once;
  static probe_outcome outcome;
  std::call_once(once, [] { outcome = probe_bwrap(); });
  return outcome;
}

/// bwrap failed before the command started: it exits 1 with its own "bwrap: " message.
bool setup_failed(const result& r) { return r.exit_code == 1 && r.err.text.rfind("bwrap: ", 0) == 0; }

}  // namespace

result execute(const spec& s, const plan& p) {
  result r;
  // A cgroup even without limits: it is the one place that counts the CPU time of everything
  // inside (bwrap's init in the new pid namespace reaps the command, so wait4 does not see it).
  std::string why_not;
  std::unique_ptr<sandbox_cgroup> cgroup =
      sandbox_cgroup::create(detect_cgroups(), s.limits.memory_bytes, s.limits.processes, why_not);
  if (cgroup && s.limits.memory_bytes > 0 && !cgroup->limits_memory()) why_not = "no memory cgroup controller";
  if (!why_not.empty() && s.limits.memory_bytes > 0) r.note = "memory limit not enforced: " + why_not;
  if (s.limits.processes > 0 && !(cgroup && cgroup->limits_processes())) {
    r.note += std::string(r.note.empty() ? "" : "; ") + "process limit is per user (RLIMIT_NPROC), no pids cgroup";
  }

  std::vector<std::unique_ptr<data_fd>> fds;
  process_spec ps;
  ps.argv = p.argv;
  ps.env = p.env;
  ps.cwd = p.cwd;
  ps.stdin_data = s.stdin_data;
  ps.timeout = s.limits.wall;
  ps.output_cap = s.limits.output_bytes;
  ps.rlimits = p.rlimits;
  ps.die_with_parent = true;  // bwrap's --die-with-parent too, from its own start only
  if (cgroup) ps.join_files = cgroup->join_files();
  for (const auto& [number, data] : p.fd_data) {
    fds.push_back(std::make_unique<data_fd>(data));
    ps.pass_fds.emplace_back(fds.back()->get(), number);
  }

  if (s.live) {
    std::string no_freezer;
    if (!cgroup) no_freezer = "the sandbox has no cgroup (" + why_not + ")";
    else if (!cgroup->can_freeze()) no_freezer = "no cgroup freezer on this host (" + detect_cgroups().describe() + ")";
    s.live->attach(cgroup.get(), no_freezer);
  }
  process_result pr;
  try {
    process_set set;
    const auto started = std::chrono::steady_clock::now();
    set.start(ps);
    while (!set.wait_any(std::chrono::milliseconds(50))) {
      // Thawed before any kill: the timeout's, a stop request's.
      const bool past_wall =
          s.limits.wall.count() > 0 && std::chrono::steady_clock::now() - started >= s.limits.wall;
      if (s.live && (past_wall || s.stop.stop_requested())) s.live->release();
      if (s.stop.stop_requested()) set.kill(0);
    }
    pr = set.result(0);
  } catch (const process_error& e) {
    if (s.live) s.live->detach();
    throw sandbox_error(e.what());
  }
  if (s.live) s.live->detach();
  r.exit_code = pr.exit_code;
  r.signal = pr.signal;
  r.timed_out = pr.timed_out;
  r.wall_seconds = pr.wall_seconds;
  r.cpu_seconds = pr.cpu_seconds;
  r.out = std::move(pr.out);
  r.err = std::move(pr.err);
  if (cgroup) {
    r.oom_killed = cgroup->oom_killed();
    if (auto cpu = cgroup->cpu_seconds()) r.cpu_seconds = *cpu;
  }
  cgroup.reset();  // removes it: everything inside has ended with bwrap's pid namespace
  for (const auto& w : p.warnings) r.note += (r.note.empty() ? "" : "; ") + w;
  return r;
}

namespace {

// bwrap could not exec the command (argv mode): it exits 1 with "bwrap: execvp NAME: REASON".
// That is the command's failure, reported as a shell would: 127 not found, 126 not executable.
bool exec_failed(result& r) {
  if (!setup_failed(r) || r.err.text.rfind("bwrap: execvp ", 0) != 0) return false;
  r.exit_code = r.err.text.find("No such file or directory") != std::string::npos ? 127 : 126;
  return true;
}

// Runs the plan `make(facts)` builds; where bwrap cannot set the sandbox up, says why, or retries
// without a network namespace where that is the only thing missing (IP sockets are then refused
// by seccomp instead). For an argv, a program bwrap cannot exec is the command's failure; for a
// shell line, a missing bash is the sandbox's.
template <class MakePlan>
result run_planned(const spec& s, bool argv, MakePlan make) {
  host_facts facts = host_facts::current();
  result r = execute(s, make(facts));
  if (s.isolation == isolation::none || !setup_failed(r) || (argv && exec_failed(r))) return r;
  const auto& probe = probe_once();
  if (probe.reason) throw sandbox_error(*probe.reason);
  if (!probe.network_namespace && facts.network_namespace) {
    facts.network_namespace = false;
    r = execute(s, make(facts));
    if (!setup_failed(r) || (argv && exec_failed(r))) return r;
  }
  std::string message = r.err.text.substr(0, 2000);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  throw sandbox_error(fmt::format("bubblewrap could not set up the sandbox: {}", message));
}

// Unsandboxed, the program is looked up here, before starting: a name that is not found (or a
// file that cannot be executed) is a result like a shell's, as bwrap's own lookup gives.
std::optional<result> unstartable(const plan& p) {
  const std::string& name = p.argv.front();
  int status = 0;
  if (name.find('/') == std::string::npos) {
    const auto path = p.env.find("PATH");
    if (find_executable(name, path == p.env.end() ? "" : path->second).empty()) status = 127;
  } else {
    const fs::path file = p.cwd / name;  // an absolute name replaces the cwd
    if (!fs::exists(file)) status = 127;
    else if (::access(file.c_str(), X_OK) != 0) status = 126;
  }
  if (status == 0) return std::nullopt;
  result r;
  r.exit_code = status;
  r.err.text = fmt::format("{}: {}\n", name, status == 127 ? "command not found" : "permission denied");
  r.err.total_bytes = r.err.text.size();
  for (const auto& w : p.warnings) r.note += (r.note.empty() ? "" : "; ") + w;
  return r;
}

}  // namespace

std::optional<std::string> unavailable_reason() { return probe_once().reason; }

result run(const spec& s, const std::string& line) {
  return run_planned(s, false, [&](const host_facts& facts) { return make_plan(s, line, facts); });
}

result run_argv(const spec& s, const std::vector<std::string>& argv) {
  if (s.isolation == isolation::none) {
    const plan p = make_argv_plan(s, argv);
    if (auto r = unstartable(p)) return *r;
    return execute(s, p);
  }
  return run_planned(s, true, [&](const host_facts& facts) { return make_argv_plan(s, argv, facts); });
}

}  // namespace pk::sandbox
