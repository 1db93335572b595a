// A real single-node Slurm for tests: Debian's munged, slurmctld and slurmd started in the
// foreground by the test itself (no systemd, no /etc), every file under a scratch directory, on
// ports free at the time, with fake GPUs as GRES on character devices made there. The daemons are
// the test's children with a parent-death signal, so they die with a test that crashes; the
// destructor cancels every job, waits for it, and stops the daemons by PID.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pk::run::test_support {

class slurm_cluster {
 public:
  /// Why no cluster can start here (not root, packages missing), or nullopt.
  static std::optional<std::string> unavailable_reason();

  /// Starts the daemons and waits for the node to be idle; `cpus` task slots, `gpus` fake GPUs.
  /// `scratch` and every directory above it must be searchable by all (munged checks its socket's).
  /// Sets SLURM_CONF in this process's environment, so every Slurm command it or its children run
  /// talks to this cluster. Throws std::runtime_error with the daemons' logs when it cannot start.
  slurm_cluster(const std::filesystem::path& scratch, int cpus, int gpus);
  ~slurm_cluster();
  slurm_cluster(const slurm_cluster&) = delete;
  slurm_cluster& operator=(const slurm_cluster&) = delete;

  /// Runs a Slurm client command; returns its stdout, or throws std::runtime_error with stderr.
  std::string command(const std::vector<std::string>& argv) const;
  /// Waits until no job is left in the queue; false when `limit` passed first.
  bool wait_for_empty_queue(std::chrono::seconds limit) const;
  /// The completed-jobs log (jobcomp/filetxt): one line per ended job with its times and state.
  std::string finished_jobs() const;
  /// The tail of each daemon's log, for failure messages.
  std::string logs() const;

 private:
  pid_t start(const std::vector<std::string>& argv, const std::string& log);
  /// Throws with the logs when the daemon `pid` has already exited.
  void check_alive(pid_t pid, const std::string& name) const;
  void stop(pid_t& pid) const;

  std::filesystem::path dir_;
  pid_t munged_ = -1, slurmctld_ = -1, slurmd_ = -1;
};

}  // namespace pk::run::test_support
