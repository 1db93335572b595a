// One agent episode: the model acts in a fresh sandbox per command until it submits or a limit
// ends the episode, and every event goes to the transcript as it happens.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_config.h"
#include "agent/limits.h"
#include "agent/llm/llm.h"
#include "agent/prompts.h"
#include "sandbox/sandbox.h"

namespace pk::agent {

/// What the episode is about: a task text and the directory the model starts from.
struct task_spec {
  std::string id;                     ///< e.g. the problem id; recorded in the header
  std::string text;                   ///< rendered into prompts/task.md
  std::filesystem::path workspace;    ///< copied to OUT/workspace; never modified
  std::filesystem::path check;        ///< optional: a script whose exit 0 scores 1 after submit
};

/// The result of checking a submission (the evaluator work fills gpu_seconds and details).
struct evaluation {
  bool passed = false;
  double score = 0;
  double gpu_seconds = 0;
  nlohmann::json details;
};
using evaluator = std::function<evaluation(const std::filesystem::path& workspace)>;

struct episode_options {
  agent_config cfg;
  prompt_set prompts;
  llm::model_config model;        ///< recorded in the header (never a key: keys live in the env)
  std::optional<std::int64_t> seed;
  sandbox::spec sandbox;          ///< isolation, GPUs, env; workspace and timeout are set per action
  evaluator evaluate;             ///< run after submit; empty: no score
  /// Recorded replies played before going live (resume and fork); their actions re-execute.
  std::vector<llm::response> replay;
  nlohmann::json parent;          ///< fork: {"transcript", "step"}; resume: {"resumed_from", ...}
  nlohmann::json tools;           ///< the header's `tools`: what `sandbox` binds besides the shell
  usage_so_far used_before;       ///< resume: wall time already spent by earlier attempts
  /// Called with every event after it is written (progress display); may be empty.
  std::function<void(const nlohmann::json&)> on_event;
};

struct episode_result {
  end_reason reason = end_reason::model_error;
  std::string message;
  std::optional<evaluation> eval;
  usage_so_far used;
  std::filesystem::path transcript;
};

/// Runs one episode in `out_dir` (which must hold the prepared workspace/; see episode_dir.h),
/// writing out_dir/transcript.jsonl afresh. `live` may be null when only replaying.
episode_result run_episode(const task_spec& task, const episode_options& opt, llm::client* live,
                           const std::filesystem::path& out_dir);

}  // namespace pk::agent
