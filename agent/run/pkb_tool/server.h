// The server side of `pkb`: one thread of pkagent per episode, listening on a Unix socket that
// the episode's sandbox sees at /run/pkb/pkb.sock. Each request leases the problem's GPUs from
// the scheduler for its own duration only (so an episode waiting for its model holds no GPU),
// runs in a fresh sandbox or evaluation, and answers with text shaped for the model.
//
//   pkb_server srv(ctx, episode_dir / "pkb");   // listening from here on
//   spec.binds.push_back({srv.socket_dir(), "/run/pkb"});
//   ... run the episode ...
//   // the destructor stops the thread; leases never outlive a request
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/evaluate.h"
#include "bench/eval/problem.h"
#include "agent/run/pkb_tool/protocol.h"
#include "agent/run/scheduler/gpu_scheduler.h"
#include "sandbox/sandbox.h"

namespace pk::pkb {

/// What the tool works on and with.
struct context {
  bench::problem problem;
  bench::eval_options eval;           ///< base options: world, device, isolation, hardware, cache
  std::filesystem::path workspace;    ///< the episode's workspace on the host (holds solution.py)
  scheduler::gpu_scheduler* gpus = nullptr;
  scheduler::holder holder;           ///< the episode's, with its GPU-second cap
  int check_trials = 2;               ///< visible trials of `pkb check` / `submit`
  long long check_seed = 1;           ///< visible seeds; final scoring uses others
  double command_timeout_s = 600;     ///< `pkb run` and `pkb profile`
  sandbox::spec run_sandbox;          ///< base spec of `pkb run` (isolation, env); GPUs per lease
  std::filesystem::path log;          ///< pkb.jsonl: one line per request (lease times, exit)
  std::filesystem::path pkagent;      ///< what `pkb profile` runs under ncu; empty: this process (pkagent)
  /// The files the workspace started from (PROBLEM.md, the kernels_runtime docs ...): unchanged
  /// copies of them are not scanned for multicast before `pkb run` (the docs name what they forbid).
  std::filesystem::path task_dir;
};

class server {
 public:
  /// Creates `socket_dir` (mode 0755) and the socket in it, and starts serving.
  /// Throws std::runtime_error when the socket cannot be created.
  server(context ctx, std::filesystem::path socket_dir);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  const std::filesystem::path& socket_dir() const { return dir_; }
  std::filesystem::path socket_path() const { return dir_ / std::string(socket_name); }
  /// Requests answered so far.
  int requests() const { return requests_.load(); }

  /// Answers one request (also used directly by tests); never throws for bad input.
  reply handle(const std::vector<std::string>& argv, std::stop_token stop = {});

 private:
  void serve(std::stop_token stop);
  void log(const nlohmann::json& line);

  context ctx_;
  std::filesystem::path dir_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  std::atomic<int> requests_{0};
  std::mutex log_mutex_;
  std::jthread thread_;
};

/// The help text `pkb` and `pkb help` print.
std::string usage();

}  // namespace pk::pkb
