#include "agent/llm/sse.h"

namespace pk::llm::detail {

void sse_parser::feed(std::string_view chunk, const sink& emit) {
  for (char c : chunk) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n pair: the line already ended at \r
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\r' || c == '\n') {
      line(pending_, emit);
      pending_.clear();
    } else {
      pending_.push_back(c);
    }
  }
}

void sse_parser::line(std::string_view l, const sink& emit) {
  if (l.empty()) {
    if (has_data_ || !current_.event.empty()) emit(current_);
    current_ = {};
    has_data_ = false;
    return;
  }
  if (l.front() == ':') return;  // comment / keep-alive
  const auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  }  // id: and retry: do not matter for one-shot model streams
}

}  // namespace pk::llm::detail
