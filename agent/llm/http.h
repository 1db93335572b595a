// One HTTP POST over libcurl, with connect / whole-request / idle timeouts, for the providers.
// A fresh easy handle per call (thread-safe without locks on the hot path); DNS and TLS sessions
// are shared through one curl share object so that repeated calls skip handshakes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/llm/llm.h"

namespace pk::llm::detail {

struct http_request {
  std::string url;
  std::vector<std::string> headers;  ///< "Name: value"
  std::string body;
  timeouts limits;
  bool idle_timeout = true;  ///< streams only: a non-streamed reply is silent until it is done
};

struct http_outcome {
  enum class failure { none, connect, connect_timeout, request_timeout, idle_timeout, broken, aborted };
  failure fail = failure::none;
  std::string error;  ///< curl's description when fail != none
  long status = 0;
  bool event_stream = false;  ///< the reply was text/event-stream (its bytes went to on_stream)
  std::string body;           ///< the reply when it was not an event stream (capped)
  std::optional<millis> retry_after;  ///< Retry-After / retry-after-ms, when sent
};

/// POSTs `req`. A 2xx text/event-stream body goes to `on_stream` chunk by chunk (returning false
/// aborts the transfer with failure::aborted); any other body is collected in outcome.body.
http_outcome http_post(const http_request& req, const std::function<bool(std::string_view)>& on_stream);

/// Retry-After: delta-seconds or an HTTP date; nullopt when unparsable.
std::optional<millis> parse_retry_after(std::string_view value);

}  // namespace pk::llm::detail
