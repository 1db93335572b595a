// A stable 64-bit FNV-1a digest for cache keys (reference outputs, JIT build directories).
// Hand-written (ten lines) because std::hash is not specified to be stable across builds and
// neither Boost nor the standard library offers a stable byte hash; this is no security hash:
// the caches it keys live where candidates cannot write.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::bench {

class digest {
 public:
  /// Adds the bytes and a separator, so that ("ab","c") and ("a","bc") differ.
  digest& add(std::string_view bytes) {
    for (unsigned char c : bytes) mix(c);
    mix(0xff);
    return *this;
  }
  /// Adds a file's bytes (as add() does); throws std::system_error naming it if it cannot be read.
  digest& add_file(const std::filesystem::path& path) { return add(read_file(path)); }
  std::uint64_t value() const { return h_; }
  std::string hex() const { return fmt::format("{:016x}", h_); }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= 0x100000001b3ULL;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace pk::bench
