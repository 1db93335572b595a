// Zero-shot generation: one completion from the task text; the first fenced python block is the
// solution (else the first bare fenced block, else the whole reply, as the upstream benchmark does).
#pragma once

#include <filesystem>
#include <string>

#include "agent/limits.h"
#include "agent/llm/llm.h"

namespace pk::run {

/// The solution source in a model's reply.
std::string extract_solution(const std::string& reply);

struct zero_shot_outcome {
  agent::end_reason reason = agent::end_reason::model_error;  ///< submitted (a reply came) or model_error
  std::string message;
  agent::usage_so_far used;
};

/// Runs (or, when ep_dir/transcript.jsonl already holds the reply, re-reads) the one model call,
/// recording it in ep_dir/transcript.jsonl, and writes the extracted solution to
/// ep_dir/workspace/solution.py. `system` and `user` are the rendered prompts.
zero_shot_outcome run_zero_shot(llm::client& client, const llm::model_config& model, const std::string& task_id,
                                const std::string& system, const std::string& user,
                                const std::filesystem::path& ep_dir);

}  // namespace pk::run
