// The agent's settings: action format, episode limits and observation truncation, read strictly
// from config/agent.toml (and `--set KEY=VALUE` overrides on the command line).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pk::agent {

enum class action_format {
  tools,  ///< native tool calling: a `bash` tool taking {command} and a `submit` tool
  text,   ///< exactly one fenced bash block per reply; `submit` is a command
};
std::string_view to_string(action_format f);

/// Limits of one episode; 0 means "no limit" for every field.
struct episode_limits {
  std::int64_t steps = 50;               ///< model replies (each one action)
  std::int64_t format_errors = 3;        ///< consecutive replies without exactly one valid action
  std::int64_t input_tokens = 0;         ///< summed over all model calls
  std::int64_t output_tokens = 0;        ///< summed over all model calls
  double dollars = 0;                    ///< summed cost of all model calls
  double wall_seconds = 0;               ///< the whole episode, crashes and resumes included
  double command_timeout_seconds = 600;  ///< one action in the sandbox (enforced by the sandbox)
  double gpu_seconds = 0;                ///< GPU time of evaluations (filled by the evaluator)
  double warn_fraction = 0.8;            ///< warn the model once a limit is this far used; 0 = never
};

struct agent_config {
  enum action_format action_format = action_format::tools;
  episode_limits limits;
  std::uint64_t stdout_bytes = 10 * 1024;  ///< shown per stream, as head + tail
  std::uint64_t stderr_bytes = 10 * 1024;
};

/// Reads `file` (config/agent.toml). Throws pk::config::config_error naming file and key.
agent_config load_agent_config(const std::filesystem::path& file);
/// Applies "table.key=value" overrides: TOML values (limits.steps=5, action.format="text"), or
/// text that is not one taken as a string (action.format=text).
void apply_overrides(agent_config& cfg, const std::vector<std::string>& overrides);

nlohmann::json to_json(const agent_config& cfg);
agent_config agent_config_from_json(const nlohmann::json& j);

}  // namespace pk::agent
