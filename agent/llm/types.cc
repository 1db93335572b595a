// Plain helpers over the types of llm.h: names, usage sums, cost, the error type, run totals.
#include <cmath>

#include "agent/llm/llm.h"

namespace pk::llm {

std::string_view to_string(role r) {
  switch (r) {
    case role::system: return "system";
    case role::user: return "user";
    case role::assistant: return "assistant";
    case role::tool: return "tool";
  }
  return "?";
}

std::string_view to_string(finish_reason f) {
  switch (f) {
    case finish_reason::stop: return "stop";
    case finish_reason::length: return "length";
    case finish_reason::tool_calls: return "tool_calls";
    case finish_reason::content_filter: return "content_filter";
    case finish_reason::other: return "other";
  }
  return "?";
}

std::string_view to_string(protocol p) {
  switch (p) {
    case protocol::openai_chat: return "openai-chat";
    case protocol::openai_responses: return "openai-responses";
    case protocol::anthropic: return "anthropic";
  }
  return "?";
}

std::string_view to_string(llm_error::kind k) {
  switch (k) {
    case llm_error::kind::retries_exhausted: return "retries exhausted";
    case llm_error::kind::http_status: return "http status";
    case llm_error::kind::protocol: return "protocol";
    case llm_error::kind::timeout: return "timeout";
    case llm_error::kind::connection: return "connection";
    case llm_error::kind::config: return "config";
    case llm_error::kind::context_overflow: return "context overflow";
  }
  return "?";
}

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
