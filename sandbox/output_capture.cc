#include "sandbox/output_capture.h"

#include <algorithm>

#include <fmt/format.h>

namespace pk::sandbox {

output_capture::output_capture(std::uint64_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

void output_capture::append(std::string_view data) {
  total_ += data.size();
  if (head_.size() < head_cap_) {
    const auto n = std::min<std::size_t>(data.size(), head_cap_ - head_.size());
    head_.append(data.substr(0, n));
    data.remove_prefix(n);
  }
  if (tail_cap_ == 0 || data.empty()) return;
  if (data.size() >= tail_cap_) {  // only the last tail_cap_ bytes can survive
    tail_.assign(data.substr(data.size() - tail_cap_));
    tail_pos_ = 0;
    return;
  }
  if (tail_.size() < tail_cap_) {  // still filling the ring
    const auto n = std::min<std::size_t>(data.size(), tail_cap_ - tail_.size());
    tail_.append(data.substr(0, n));
    data.remove_prefix(n);
    if (data.empty()) return;
  }
  while (!data.empty()) {  // overwrite the oldest bytes
    const auto n = std::min<std::size_t>(data.size(), tail_cap_ - tail_pos_);
    tail_.replace(tail_pos_, n, data.substr(0, n));
    tail_pos_ = (tail_pos_ + n) % tail_cap_;
    data.remove_prefix(n);
  }
}

captured_output output_capture::finish() const {
  captured_output out;
  out.total_bytes = total_;
  const std::uint64_t kept = head_.size() + tail_.size();
  out.truncated = kept < total_;
  out.text.reserve(kept + 64);
  out.text = head_;
  if (out.truncated) out.text += fmt::format("\n[... {} bytes omitted ...]\n", total_ - kept);
  out.text.append(tail_, tail_pos_, std::string::npos);
  out.text.append(tail_, 0, tail_pos_);
  return out;
}

}  // namespace pk::sandbox
