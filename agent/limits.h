// Episode limits: what has been used, whether a limit ends the episode, and when to warn.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/agent_config.h"
#include "agent/llm/llm.h"

namespace pk::agent {

/// Why an episode ended.
enum class end_reason {
  submitted,
  step_limit,
  format_error_limit,
  input_token_limit,
  output_token_limit,
  cost_limit,
  wall_time_limit,
  gpu_time_limit,
  model_error,    ///< the provider failed past its retries, or the demo script ran out
  context_overflow,  ///< the conversation no longer fits the model's context window
  sandbox_error,  ///< the sandbox could not be created
  replay_end,     ///< replay without a live model: the recorded replies ran out
  no_code_block,  ///< zero-shot: the one reply holds no code, so nothing is judged
};
std::string_view to_string(end_reason r);
std::optional<end_reason> end_reason_from_string(std::string_view s);

/// What an episode has used so far.
struct usage_so_far {
  std::int64_t steps = 0;
  std::int64_t consecutive_format_errors = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double dollars = 0;
  double wall_seconds = 0;
  double gpu_seconds = 0;
};
nlohmann::json to_json(const usage_so_far& u);

struct limit_hit {
  end_reason reason;
  std::string message;  ///< e.g. "steps: 50 of 50 used"
};

/// The first limit `used` has reached, if any (checked before each model call).
std::optional<limit_hit> exceeded(const episode_limits& limits, const usage_so_far& used);

/// How a model call that failed ends the episode: context_overflow (with what to change) when
/// the provider refused a prompt too long for its context, model_error otherwise.
limit_hit end_for_model_failure(const llm::llm_error& e);

/// A limit the model should be warned about: past warn_fraction and not warned before.
struct limit_warning {
  std::string limit;        ///< "steps", "dollars" ...
  std::string used;         ///< formatted amount used
  std::string limit_value;  ///< formatted limit
  std::string next_step;    ///< steps only: the number of the step the model's next reply is
};
/// The limits newly past `limits.warn_fraction`, for the prompt of the step about to start: `used`
/// is what the finished steps used, and the steps limit counts the coming step too, so that the
/// warning reaches the model while it still has a step to act on it (with a limit of 3 steps the
/// prompt of step 3 carries it). Each is added to `warned` so it warns once.
std::vector<limit_warning> new_warnings(const episode_limits& limits, const usage_so_far& used,
                                        std::set<std::string>& warned);

}  // namespace pk::agent
