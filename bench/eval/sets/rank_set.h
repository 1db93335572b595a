// One process set of an evaluation: the reference's ranks or the candidate's, started in a sandbox
// of their own (`pkagent _ranks`, see rank_supervisor.h) on the evaluation's GPUs, possibly ahead of
// need (warm_pool.h), and their connections to the judge: one Unix socket per set, in a directory
// only that set's sandbox sees, one connection per rank, one JSON line per command and per reply.
//
// Every set runs under the multicast guard (sandbox/gpu_guard.h), on GPUs and on CPU alike, so that
// a candidate's call of a multicast entry point is refused and recorded wherever it runs.
//
// Everything that arrives from a candidate's set is its claim: replies are checked for form (a
// reply names the command it answers), a rank that says something it should not, connects twice,
// or closes early is a failure of the set with that evidence, never an error of the judge.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/sets/rank_supervisor.h"
#include "sandbox/sandbox.h"

namespace pk::bench {

enum class set_role { reference, candidate };
std::string to_string(set_role r);

/// A process set's sandbox: decided when the set starts, before it knows its evaluation.
struct rank_set_spec {
  std::filesystem::path workspace;  ///< staged with the worker (staging.h); bound at /workspace
  std::filesystem::path jit_dir;    ///< bound writable at /workspace/ext for JIT builds; empty: none
  launch_spec launch;               ///< how the supervisor starts the ranks (the socket is filled in)
  std::vector<int> gpus;            ///< host GPU indices, one per rank (empty on CPU)
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  std::vector<sandbox::bind_mount> binds;
  std::vector<std::filesystem::path> hidden;
  std::map<std::string, std::string> env;  ///< extra environment for the whole set
  std::chrono::milliseconds wall_limit{600'000};
  /// What every plan given to this set must say about its sandbox (paths of what is bound in).
  nlohmann::json plan_base = nlohmann::json::object();
  std::vector<std::shared_ptr<void>> owned;  ///< kept as long as the set (its scratch directories)
};

/// Why a set stopped answering, as the judge saw it.
struct rank_failure {
  enum class kind {
    reported,  ///< the rank reported an error (worker_kind says which)
    exited,    ///< the rank's connection closed, or the set ended, before it answered
    timeout,   ///< no answer by the deadline
    tampered,  ///< something on the judge's channel no honest worker sends
  };
  kind what = kind::exited;
  int rank = -1;            ///< -1: not attributable to one rank
  std::string phase;        ///< what the judge had asked ("import", "trial 0", "timing 1" ...)
  std::string worker_kind;  ///< for `reported`: import_error, call_error, bad_output ...
  std::string message;
  double limit_s = 0;       ///< for `timeout`
  set_role set = set_role::candidate;  ///< whose process set
};

/// How the set's sandbox ended, read after everything in it is gone.
struct rank_set_ending {
  sandbox::result sandbox;
  std::optional<ranks_report> ranks;  ///< ranks.json, when it could be read
  /// NVLink multicast calls the run-time guard refused in the set's processes, one per line
  /// (sandbox/gpu_guard.h); empty when there were none.
  std::string multicast_refusals;
};

/// A process set, started ahead of its evaluation: its ranks import torch and the worker, connect
/// and wait; go() hands them the evaluation (then the set is spent: one evaluation per set).
class rank_set {
 public:
  using clock = std::chrono::steady_clock;

  /// Starts the set (the sandbox runs in a thread of its own). Throws sandbox::sandbox_error when
  /// no sandbox can be made.
  explicit rank_set(rank_set_spec spec);
  /// Stops the set if it still runs and waits for its sandbox to end.
  ~rank_set();
  rank_set(const rank_set&) = delete;
  rank_set& operator=(const rank_set&) = delete;

  const std::filesystem::path& workspace() const;
  const std::filesystem::path& jit_dir() const;
  /// Whether the set's sandbox has ended (a set that died while waiting is of no use).
  bool ended() const;

  /// Hands the set its evaluation: writes `plan` as the ranks' plan (plan.json in the workspace,
  /// where the caller staged the files it names) and lets every rank go, now or when it connects.
  void go(set_role role, nlohmann::json plan);

  set_role role() const;
  int world() const;
  /// The files the judge wrote into the set's workspace (its plan, launch.json), by path, with
  /// their contents as written.
  const std::map<std::filesystem::path, std::string>& written_files() const;
  /// The host pid of a connected rank (from the socket's peer credentials; 0 when unknown).
  int rank_pid(int rank) const;

  /// Sends `command` (an object with "cmd") to `rank`, numbered so that its reply can be matched.
  void send(int rank, nlohmann::json command);
  /// send() to every rank.
  void send_all(const nlohmann::json& command);
  /// Makes every rank's last command due once more: for a command answered twice (a timing block
  /// and the commitment that follows it), the second answer is awaited without another command.
  void await_second_answer();

  /// Stops or continues every process of the set: its ranks (SIGSTOP, SIGCONT: every thread) and,
  /// through the sandbox's cgroup freezer, whatever else runs in its sandbox (children, daemons,
  /// processes forked while it is being stopped). The judge keeps a set stopped while it waits
  /// (the other set's turn, the judge's own work), so that nothing of a candidate runs beside the
  /// reference's timed blocks.
  void pause();
  void resume();
  /// Why pause() stops only the rank processes ("" when it stops everything): no sandbox, or no
  /// cgroup freezer on this host.
  std::string pause_limit() const;

  /// Kills the set now.
  void stop();
  /// Waits until the sandbox has ended (after a shutdown, a stop, or on its own) and returns how.
  const rank_set_ending& finish();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  friend std::optional<rank_failure> await_replies(std::span<rank_set* const>, const std::string&,
                                                   clock::time_point, std::vector<std::vector<nlohmann::json>>&);
};

/// Waits for one reply from every rank of every set to the command each was last sent (or, before
/// any command, for every rank's `ready`), until `deadline`. On success replies[i][r] holds set
/// i's rank r's reply. Returns the first failure otherwise; `phase` names what was asked.
std::optional<rank_failure> await_replies(std::span<rank_set* const> sets, const std::string& phase,
                                          rank_set::clock::time_point deadline,
                                          std::vector<std::vector<nlohmann::json>>& replies);

}  // namespace pk::bench
