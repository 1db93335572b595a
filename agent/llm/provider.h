// What differs between the wire protocols, behind one small interface: the endpoint, the auth
// headers, the request body, the reply (whole or as server-sent events) and the error shape.
// The HTTP, retry and accounting logic (http_client.cc) is shared by all of them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/llm/llm.h"
#include "agent/llm/sse.h"

namespace pk::llm::detail {

/// Why one attempt failed; http_client decides whether to retry from `retryable`.
struct attempt_failure {
  llm_error::kind kind = llm_error::kind::protocol;
  bool retryable = false;
  int status = 0;
  std::string message;
  std::string provider_message;
  std::optional<millis> retry_after;
};

/// Thrown by providers when a reply cannot be understood. Malformed or truncated replies are
/// transient in practice (proxies, overloaded gateways), so they are retryable by default.
struct protocol_failure {
  std::string message;
  bool retryable = true;
  std::string provider_message = {};
};

/// Turns server-sent events into a response.
class stream_assembler {
 public:
  virtual ~stream_assembler() = default;
  virtual void on_event(const sse_event& e) = 0;
  /// The response once the stream ended; throws protocol_failure when it ended early.
  virtual response finish() = 0;
};

class provider {
 public:
  virtual ~provider() = default;
  virtual std::string endpoint(const model_config& cfg) const = 0;
  virtual std::vector<std::string> headers(const std::string& key) const = 0;
  virtual json body(const request& req, const model_config& cfg, bool stream) const = 0;
  /// Parses a whole (non-streamed) reply; throws protocol_failure.
  virtual response parse(const json& reply) const = 0;
  virtual std::unique_ptr<stream_assembler> stream(std::function<void(std::string_view)> on_text) const = 0;
  /// The provider's own error text from an error body (both OpenAI and Anthropic nest it in
  /// "error.message"); empty when there is none.
  virtual std::string error_message(const json& reply) const;
};

std::unique_ptr<provider> make_openai_chat();
std::unique_ptr<provider> make_openai_responses();
std::unique_ptr<provider> make_anthropic();

// Helpers shared by the providers.

/// Whether an error reply (its body) says the prompt does not fit the model's context. Servers
/// say it in their own words: OpenAI's `context_length_exceeded`, llama.cpp's
/// `exceed_context_size_error`, vLLM's "maximum context length", Anthropic's "prompt is too long".
bool says_context_overflow(std::string_view error_body);

/// A tool call from its wire pieces; arguments that are not a JSON object are kept as text and
/// flagged, so that the agent can tell the model instead of crashing.
tool_call make_tool_call(std::string id, std::string name, std::string arguments_text);
/// The request's sampling with the model's defaults filled in.
sampling effective(const request& req, const model_config& cfg);
/// The system prompt: every system message's text, joined.
std::string system_text(const request& req);
/// Reads an integer field that may be absent or null.
std::int64_t int_at(const json& j, std::string_view key);
/// "Authorization: Bearer KEY", or nothing for a server that needs no key.
std::vector<std::string> bearer_auth(const std::string& key);
/// Reads a string field that may be absent, null or of another type ("" then).
std::string str_at(const json& j, std::string_view key);
/// Parses a JSON document, throwing protocol_failure naming `what` on bad JSON.
json parse_json(std::string_view text, std::string_view what);

}  // namespace pk::llm::detail
