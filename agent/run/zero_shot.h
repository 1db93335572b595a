// Zero-shot generation: one completion from the task text; the first fenced python block is the
// solution (else the first bare fenced block, else the whole reply, as the upstream benchmark does).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "agent/limits.h"
#include "agent/llm/llm.h"

namespace pk::run {

/// The solution source in a model's reply: the first fenced python block (one the output limit cut
/// off runs to the end of the reply), else the first bare fenced block, else the whole reply when it
/// defines `solution` (an answer of bare code); nullopt when the reply holds no code.
std::optional<std::string> extract_solution(const std::string& reply);

struct zero_shot_outcome {
  /// submitted (the reply holds code), no_code_block (it holds none), output_token_limit (it was
  /// cut at the output limit per reply; its code, if any, is still judged) or model_error (no reply)
  agent::end_reason reason = agent::end_reason::model_error;
  std::string message;
  agent::usage_so_far used;
};

/// Runs (or, when ep_dir/transcript.jsonl already holds the reply, re-reads) the one model call,
/// recording it in ep_dir/transcript.jsonl, and writes the extracted solution to
/// ep_dir/workspace/solution.py (none when the reply holds no code: nothing is judged then).
/// `system` and `user` are the rendered prompts.
zero_shot_outcome run_zero_shot(llm::client& client, const llm::model_config& model, const std::string& task_id,
                                const std::string& system, const std::string& user,
                                const std::filesystem::path& ep_dir);

}  // namespace pk::run
