// SHA-256 (FIPS 180-4): the one hash of the tree, for the task content hash in transcript headers
// and for the evaluator's cache keys (bench/digest.h). In pk_config, the library every
// component links. Hand-written (about 60 lines) because the GPU host lacks OpenSSL's headers and
// Boost 1.74 has no SHA-2.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pk {

class sha256 {
 public:
  sha256();
  void update(std::string_view data);
  /// The 32 digest bytes; the object is spent afterwards.
  std::array<unsigned char, 32> bytes();
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  unsigned char buf_[64];
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace pk
