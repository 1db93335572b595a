// Capped capture of one output stream: keeps the first and the last bytes of what a process
// writes, and counts all of it, so that a runaway `yes` costs bounded memory yet the caller
// still sees how the output began and how it ended.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pk::sandbox {

/// One captured stream: head and tail of what was written, and how much that was.
struct captured_output {
  std::string text;               ///< head + marker + tail when cut; everything otherwise
  std::uint64_t total_bytes = 0;  ///< everything the process wrote to this stream
  bool truncated = false;         ///< text lacks some of the bytes counted in total_bytes
};

/// Accumulates a stream under a byte cap: the first cap/2 bytes are kept as written, the
/// last cap - cap/2 in a ring. finish() joins them with a one-line marker naming the bytes
/// left out, so the text is at most cap bytes plus that marker.
class output_capture {
 public:
  explicit output_capture(std::uint64_t cap);

  void append(std::string_view data);
  std::uint64_t total_bytes() const { return total_; }
  captured_output finish() const;

 private:
  std::uint64_t head_cap_;
  std::uint64_t tail_cap_;
  std::string head_;
  std::string tail_;        ///< ring buffer of tail_cap_ bytes once full
  std::size_t tail_pos_ = 0;  ///< next write position in the ring (= oldest byte)
  std::uint64_t total_ = 0;
};

}  // namespace pk::sandbox
