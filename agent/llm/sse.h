// Server-sent events (the WHATWG event-stream format), parsed incrementally from arbitrary chunks.
// Hand-written: it is forty lines, and no Debian-packaged C++ library offers a parser on its own.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace pk::llm::detail {

struct sse_event {
  std::string event;  ///< "" when the event had no "event:" field
  std::string data;   ///< data lines joined with '\n'
};

class sse_parser {
 public:
  using sink = std::function<void(const sse_event&)>;
  /// Feeds bytes; calls `emit` for each complete event (a blank line ends one).
  void feed(std::string_view chunk, const sink& emit);

 private:
  void line(std::string_view l, const sink& emit);
  std::string pending_;
  sse_event current_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

}  // namespace pk::llm::detail
