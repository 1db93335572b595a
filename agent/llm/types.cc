// Plain helpers over the types of llm.h: names, usage sums, cost, the error type, run totals.
#include <array>
#include <cmath>

#include "agent/llm/llm.h"
#include "config/enum_names.h"

namespace pk::llm {

constexpr std::array<pk::config::enum_name<role>, 4> role_names = {{
    {role::system, "system"},
    {role::user, "user"},
    {role::assistant, "assistant"},
    {role::tool, "tool"},
}};

std::string_view to_string(role r) { return pk::config::enum_to_string(role_names, r); }

constexpr std::array<pk::config::enum_name<finish_reason>, 5> finish_reason_names = {{
    {finish_reason::stop, "stop"},
    {finish_reason::length, "length"},
    {finish_reason::tool_calls, "tool_calls"},
    {finish_reason::content_filter, "content_filter"},
    {finish_reason::other, "other"},
}};

std::string_view to_string(finish_reason f) { return pk::config::enum_to_string(finish_reason_names, f); }

constexpr std::array<pk::config::enum_name<protocol>, 3> protocol_names = {{
    {protocol::openai_chat, "openai-chat"},
    {protocol::openai_responses, "openai-responses"},
    {protocol::anthropic, "anthropic"},
}};

std::string_view to_string(protocol p) { return pk::config::enum_to_string(protocol_names, p); }

constexpr std::array<pk::config::enum_name<llm_error::kind>, 7> llm_error_kind_names = {{
    {llm_error::kind::retries_exhausted, "retries exhausted"},
    {llm_error::kind::http_status, "http status"},
    {llm_error::kind::protocol, "protocol"},
    {llm_error::kind::timeout, "timeout"},
    {llm_error::kind::connection, "connection"},
    {llm_error::kind::config, "config"},
    {llm_error::kind::context_overflow, "context overflow"},
}};

std::string_view to_string(llm_error::kind k) { return pk::config::enum_to_string(llm_error_kind_names, k); }

usage& usage::operator+=(const usage& o) {
  input += o.input;
  cached_input += o.cached_input;
  cache_write += o.cache_write;
  output += o.output;
  reasoning += o.reasoning;
  return *this;
}

double cost_usd(const usage& u, const prices& p) {
  if (!p.known) return 0;
  // Cached reads and cache writes are billed at their own rates; the rest of the prompt at input.
  const auto plain = std::max<std::int64_t>(0, u.input - u.cached_input - u.cache_write);
  return (static_cast<double>(plain) * p.input + static_cast<double>(u.cached_input) * p.cached_input +
          static_cast<double>(u.cache_write) * p.cache_write + static_cast<double>(u.output) * p.output) /
         1e6;
}

message system_message(std::string text) {
  message m;
  m.role = role::system;
  m.text = std::move(text);
  return m;
}

message user_message(std::string text) {
  message m;
  m.text = std::move(text);
  return m;
}

message tool_result(std::string call_id, std::string name, std::string text, bool is_error) {
  message m;
  m.role = role::tool;
  m.tool_call_id = std::move(call_id);
  m.tool_name = std::move(name);
  m.text = std::move(text);
  m.is_error = is_error;
  return m;
}

message response::to_message() const {
  message m;
  m.role = role::assistant;
  m.text = text;
  m.tool_calls = tool_calls;
  m.opaque = opaque;
  return m;
}

llm_error::llm_error(kind k, std::string message, int status, std::string provider_message, int retries)
    : std::runtime_error(std::move(message)),
      kind_(k),
      status_(status),
      provider_message_(std::move(provider_message)),
      retries_(retries) {}

void usage_totals::add(const response& r, const std::string& model_name) {
  auto fold = [&](snapshot& s) {
    s.calls += 1;
    s.retries += r.retries;
    s.tokens += r.tokens;
    s.cost_usd += r.cost_usd;
    s.latency += r.latency;
  };
  std::lock_guard lock(mu_);
  fold(total_);
  fold(by_model_[model_name.empty() ? r.model : model_name]);
}

usage_totals::snapshot usage_totals::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::map<std::string, usage_totals::snapshot> usage_totals::by_model() const {
  std::lock_guard lock(mu_);
  return by_model_;
}

}  // namespace pk::llm
