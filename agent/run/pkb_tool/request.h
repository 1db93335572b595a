// What a pkb command's handler is given and what it answers with: the request, the episode's
// context, and the reply (the wire format's, protocol.h). The command table (commands.h) and the
// handlers (handlers.h) both build on this header and not on each other's.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/run/pkb_tool/protocol.h"
#include "agent/run/pkb_tool/tool_texts.h"
#include "agent/run/scheduler/gpu_scheduler.h"
#include "bench/eval/evaluate.h"
#include "bench/suite/problem.h"
#include "sandbox/spec.h"

namespace pk::pkb {

/// What one episode's pkb server works on and with.
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
  /// The model-facing texts (prompts/pkb/); null: the server loads the installed ones.
  std::shared_ptr<const tool_texts> texts;

  bool cuda() const { return eval.device == bench::device_kind::cuda; }
};

/// One request as its handler sees it.
struct request {
  std::string name;               ///< the command as typed
  std::vector<std::string> args;  ///< what follows the name (for argument_rule::command: after `--`)
  std::vector<int> gpus;          ///< leased for this request (commands that lease)
  nlohmann::json& log;            ///< the request's pkb.jsonl line: handlers add what they found
};

/// Answers a request; throws std::invalid_argument for the model's mistakes (exit 2) and
/// anything else for the tool's own failures (exit 3).
using handler = reply (*)(const context& ctx, request& req);

}  // namespace pk::pkb
