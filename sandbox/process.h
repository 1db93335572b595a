// Child processes under control: start an argv with an exact environment, capture its stdout
// and stderr under a cap, enforce a wall-clock timeout, and kill the whole process group (not
// just the child) when it times out, when it exits, or when the caller gives up on it.
//
// Used by the sandbox (the child is bwrap) and by the evaluator's rank launcher (the children
// are the ranks of one run: when one fails or hangs, kill_all() ends the others).
//
// Built on Boost.Process v1 (bp::child + bp::group, async pipes and timers on one asio
// io_context), which Boost 1.74 and 1.83 both ship. Reaping is our own (waitid + wait4 on
// SIGCHLD) so that the group can be killed while the exited leader still holds its pid, and so
// that the CPU time of the child and its reaped descendants comes back with the status.
//
//   pk::sandbox::process_spec s{.argv = {"nvcc", "-c", "k.cu"}, .env = {{"PATH", "/usr/bin"}}};
//   s.timeout = std::chrono::seconds(60);
//   pk::sandbox::process_result r = pk::sandbox::run_process(s);
//
//   pk::sandbox::process_set ranks;            // several at once
//   for (auto& spec : rank_specs) ranks.start(spec);
//   while (auto id = ranks.wait_any())         // the next one to finish
//     if (!ranks.result(*id).ok()) { ranks.kill_all(); break; }
//   ranks.wait_all();
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sandbox/output_capture.h"

namespace pk::sandbox {

/// A process could not be started at all (executable missing, not executable, fork failed,
/// a pre-exec step failed). The message names the program and the reason.
class process_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One setrlimit() applied in the child before exec (soft = hard = value).
struct rlimit_setting {
  int resource = 0;  ///< RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC ...
  std::uint64_t value = 0;
};

/// What to start and under which limits.
struct process_spec {
  /// argv[0] is a path, or a bare name looked up in env's PATH (else pkagent's own PATH).
  std::vector<std::string> argv;
  /// The child's entire environment: nothing of pkagent's own environment is inherited.
  std::map<std::string, std::string> env;
  /// Working directory; empty = pkagent's own.
  std::filesystem::path cwd;
  /// Written to the child's stdin, which is then closed. Empty: stdin reads /dev/null.
  std::string stdin_data;
  /// Wall-clock limit; 0 = none. On expiry the process group gets SIGKILL and timed_out is set.
  std::chrono::milliseconds timeout{0};
  /// Cap per captured stream, kept as head + tail (see output_capture).
  std::uint64_t output_cap = 1 << 20;
  /// Resource limits set in the child before exec (never above the current hard limit);
  /// inherited by everything it starts.
  std::vector<rlimit_setting> rlimits;
  /// Files the child writes its own pid to before exec: cgroup.procs / tasks of the cgroups
  /// that should hold it, so that no instruction of the command runs outside them.
  std::vector<std::filesystem::path> join_files;
  /// Descriptors passed to the child: {pkagent's fd, the number it gets in the child}. The
  /// parent's fd may be close-on-exec; the child's copy is not.
  std::vector<std::pair<int, int>> pass_fds;
  /// Kill the rest of the process group as soon as the child itself exits, so that nothing it
  /// left running in the background survives it (the default; the sandbox relies on it).
  bool kill_group_on_exit = true;
  /// The child gets SIGKILL when the thread that started it ends (with pkagent: killed, crashed),
  /// and does not start if pkagent ended while it was forked. Only for children waited for by
  /// the thread that starts them, as every sandbox and rank set is: the signal follows the
  /// thread, not the process. Without it a child busy in a deadlocked collective, which never
  /// reads the judge's closed socket, would run on for hours.
  bool die_with_parent = false;
};

/// How a child ended.
struct process_result {
  int exit_code = -1;     ///< its exit code; -1 when a signal ended it
  int signal = 0;         ///< the signal that ended it, 0 if none
  bool timed_out = false; ///< killed because spec.timeout passed
  bool killed = false;    ///< killed by kill() / kill_all()
  double wall_seconds = 0;
  double cpu_seconds = 0; ///< user + system of the child and of every descendant it reaped
  std::int64_t max_rss_kib = 0;  ///< largest resident set among them (wait4's ru_maxrss)
  captured_output out;
  captured_output err;

  bool ok() const { return exit_code == 0 && !timed_out && !killed; }
  /// Shell convention: the exit code, 128 + signal when killed, 124 when timed out.
  int shell_status() const;
};

/// Several children driven by one event loop in the calling thread. Each runs in its own
/// process group; a child counts as finished once it has been reaped and its output pipes
/// have closed (or, for output held open by an escaped descendant, a short grace passed).
/// Not thread-safe: use one process_set per thread. Ignores SIGPIPE in pkagent (children get
/// the default back) so that a child closing its stdin early cannot kill pkagent.
class process_set {
 public:
  process_set();
  /// Kills and reaps every child still running.
  ~process_set();
  process_set(const process_set&) = delete;
  process_set& operator=(const process_set&) = delete;

  /// Starts a child and returns its id (0, 1, 2 ... in start order); its timeout starts now.
  /// Throws process_error when it cannot be started.
  std::size_t start(const process_spec& spec);

  /// Runs until a child not yet returned by wait_any has finished, and returns its id.
  /// nullopt when every child was already returned, or when `limit` (if > 0) passed first.
  std::optional<std::size_t> wait_any(std::chrono::milliseconds limit = std::chrono::milliseconds{0});
  /// Runs until every child has finished.
  void wait_all();

  /// SIGKILL to the child's process group; no-op once it has finished. Its result reads
  /// killed = true (unless it had timed out first).
  void kill(std::size_t id);
  /// kill() for every child still running. Call wait_all() (or wait_any) to collect them.
  void kill_all();

  std::size_t size() const;
  bool finished(std::size_t id) const;
  /// The host pid of the child (also its process group id).
  int pid(std::size_t id) const;
  /// The result of a finished child; throws std::logic_error while it still runs.
  const process_result& result(std::size_t id) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The first executable `name` in the colon-separated `path_var`; empty when there is none.
std::string find_executable(const std::string& name, const std::string& path_var);

/// Starts one child and waits for it: process_set with a single member.
process_result run_process(const process_spec& spec);

}  // namespace pk::sandbox
