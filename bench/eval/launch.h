// Runs the ranks of one evaluation: `pkagent _ranks WORKSPACE` inside one sandbox holding
// exactly the leased GPUs, then reads back what the supervisor and each rank recorded.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/rank_supervisor.h"
#include "sandbox/sandbox.h"

namespace pk::bench {

struct launch_request {
  std::filesystem::path workspace;  ///< holds launch.json's files; bound at /workspace in the sandbox
  launch_spec spec;
  std::vector<int> gpus;            ///< host GPU indices, one per rank (empty on CPU)
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  /// Extra writable binds (host dir -> path inside the workspace), e.g. the JIT build cache.
  std::vector<sandbox::bind_mount> binds;
};

/// What one rank did.
struct rank_outcome {
  int rank = 0;
  int exit_code = -1;
  int signal = 0;
  bool killed = false;          ///< killed by the supervisor because another rank failed or hung
  std::string phase;            ///< its last published phase
  std::string stdout_text, stderr_text;
  std::optional<nlohmann::json> result;  ///< its result.json, when it wrote one
};

struct launch_outcome {
  std::vector<rank_outcome> ranks;
  /// The supervisor's account of the first failure: {"kind": "exit"|"timeout", "rank", "phase",
  /// "limit_s"}; null when every rank exited 0.
  nlohmann::json failure;
  double wall_seconds = 0;
  std::string sandbox_note;
};

/// Starts the supervisor and waits for it. Throws std::runtime_error when the run could not be
/// supervised at all (the sandbox failed, the supervisor itself crashed).
launch_outcome launch(const launch_request& request);

/// The path of the running pkagent binary (re-executed as the supervisor).
std::filesystem::path self_executable();

}  // namespace pk::bench
