#include "agent/limits.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::agent {
namespace {

constexpr std::array<pk::config::enum_name<end_reason>, 13> names{{
    {end_reason::submitted, "submitted"},
    {end_reason::step_limit, "step_limit"},
    {end_reason::format_error_limit, "format_error_limit"},
    {end_reason::input_token_limit, "input_token_limit"},
    {end_reason::output_token_limit, "output_token_limit"},
    {end_reason::cost_limit, "cost_limit"},
    {end_reason::wall_time_limit, "wall_time_limit"},
    {end_reason::gpu_time_limit, "gpu_time_limit"},
    {end_reason::model_error, "model_error"},
    {end_reason::context_overflow, "context_overflow"},
    {end_reason::sandbox_error, "sandbox_error"},
    {end_reason::replay_end, "replay_end"},
    {end_reason::no_code_block, "no_code_block"},
}};

// One row per limit: its name, reason, limit value, used value and how to print them.
struct row {
  const char* name;
  end_reason reason;
  double limit;
  double used;
  const char* unit;  ///< "" for counts, "$" for dollars, "s" for seconds
};

std::string show(double v, const char* unit) {
  if (std::string_view(unit) == "$") return fmt::format("${:.2f}", v);
  if (std::string_view(unit) == "s") return fmt::format("{:.0f} s", v);
  return fmt::format("{:.0f}", v);
}

std::array<row, 7> rows(const episode_limits& l, const usage_so_far& u) {
  return {{
      {"steps", end_reason::step_limit, double(l.steps), double(u.steps), ""},
      {"format_errors", end_reason::format_error_limit, double(l.format_errors),
       double(u.consecutive_format_errors), ""},
      {"input_tokens", end_reason::input_token_limit, double(l.input_tokens), double(u.input_tokens), ""},
      {"output_tokens", end_reason::output_token_limit, double(l.output_tokens), double(u.output_tokens), ""},
      {"dollars", end_reason::cost_limit, l.dollars, u.dollars, "$"},
      {"wall_seconds", end_reason::wall_time_limit, l.wall_seconds, u.wall_seconds, "s"},
      {"gpu_seconds", end_reason::gpu_time_limit, l.gpu_seconds, u.gpu_seconds, "s"},
  }};
}

}  // namespace

std::string_view to_string(end_reason r) { return pk::config::enum_to_string(names, r); }

std::optional<end_reason> end_reason_from_string(std::string_view s) { return pk::config::enum_from_string(names, s); }

nlohmann::json to_json(const usage_so_far& u) {
  return {{"steps", u.steps},
          {"input_tokens", u.input_tokens},
          {"output_tokens", u.output_tokens},
          {"dollars", u.dollars},
          {"wall_seconds", u.wall_seconds},
          {"gpu_seconds", u.gpu_seconds}};
}

std::optional<limit_hit> exceeded(const episode_limits& limits, const usage_so_far& used) {
  for (const row& r : rows(limits, used))
    if (r.limit > 0 && r.used >= r.limit)
      return limit_hit{r.reason, fmt::format("{}: {} used of a limit of {}", r.name,
                                             show(r.used, r.unit), show(r.limit, r.unit))};
  return std::nullopt;
}

limit_hit end_for_model_failure(const llm::llm_error& e) {
  if (e.what_kind() != llm::llm_error::kind::context_overflow)
    return {end_reason::model_error, fmt::format("{} ({})", e.what(), llm::to_string(e.what_kind()))};
  return {end_reason::context_overflow,
          fmt::format("{}. The conversation no longer fits the model's context window: give the server a larger "
                      "context (scripts/serve-local-model --ctx N, llama-server -c N, vllm --max-model-len N), "
                      "lower the output limit per reply (--max-output-tokens N), or end episodes "
                      "sooner (--set limits.steps=N)",
                      e.what())};
}

std::vector<limit_warning> new_warnings(const episode_limits& limits, const usage_so_far& used,
                                        std::set<std::string>& warned) {
  std::vector<limit_warning> out;
  if (limits.warn_fraction <= 0) return out;
  for (const row& r : rows(limits, used)) {
    // Format errors get their own message (prompts/format_error.md) on every occurrence.
    if (r.reason == end_reason::format_error_limit || r.limit <= 0 || warned.contains(r.name)) continue;
    const bool steps = r.reason == end_reason::step_limit;
    const double reached = steps ? r.used + 1 : r.used;
    if (reached >= limits.warn_fraction * r.limit) {
      warned.insert(r.name);
      out.push_back({r.name, show(r.used, r.unit), show(r.limit, r.unit), steps ? show(reached, "") : ""});
    }
  }
  return out;
}

}  // namespace pk::agent
