#pragma once
/// Offsets inside a symmetric heap. Every rank runs the same sequence of allocate() calls, so
/// every object lands at the same offset on every rank (what makes comm::peer a subtraction).
#include <cstddef>

namespace kr::host {

/// v rounded up to a multiple of `to` (a power of two or any positive number).
std::size_t round_up(std::size_t v, std::size_t to);

class heap_layout {
 public:
  /// capacity: usable bytes; reserved_front: bytes kept at offset 0 (the control region).
  explicit heap_layout(std::size_t capacity, std::size_t reserved_front = 0);

  /// Offset of a new block of `bytes` aligned to `align` (a power of two). Throws kr::host::error
  /// naming the request and what is left when the heap is full.
  std::size_t allocate(std::size_t bytes, std::size_t align = 256);

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return top_; }
  std::size_t available() const { return capacity_ - top_; }

 private:
  std::size_t capacity_;
  std::size_t top_;
};

}  // namespace kr::host
