#include "kr/host/heap_layout.h"

#include <string>

#include "kr/host/error.h"

namespace kr::host {

std::size_t round_up(std::size_t v, std::size_t to) { return to == 0 ? v : (v + to - 1) / to * to; }

heap_layout::heap_layout(std::size_t capacity, std::size_t reserved_front)
    : capacity_(capacity), top_(reserved_front) {
  if (reserved_front > capacity)
    throw error("kr heap: the control region (" + std::to_string(reserved_front) +
                " bytes) does not fit in a heap of " + std::to_string(capacity) + " bytes");
}

std::size_t heap_layout::allocate(std::size_t bytes, std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw error("kr heap: alignment " + std::to_string(align) + " is not a power of two");
  const std::size_t offset = round_up(top_, align);
  if (offset > capacity_ || bytes > capacity_ - offset)
    throw error("kr heap: cannot allocate " + std::to_string(bytes) + " bytes: " + std::to_string(capacity_ - top_) +
                " of " + std::to_string(capacity_) + " left; create the heap larger");
  top_ = offset + bytes;
  return offset;
}

}  // namespace kr::host
