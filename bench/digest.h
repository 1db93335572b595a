// The digest that keys the evaluator's caches (reference outputs, kr_torch and JIT build
// directories, the multicast scan's clean binaries): SHA-256 (config/sha256.h), the one hash of
// the tree. A fast non-cryptographic hash will not do: the scan's clean-binary cache is keyed by
// the bytes of a candidate's own binaries, and a candidate able to find a collision (easy for
// FNV and its kind) could have a binary with multicast instructions pass as one already scanned
// clean. Changing what goes into a key (or this hash) only invalidates cached entries: they are
// rebuilt under the new keys and the old ones lie unused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/read_file.h"
#include "config/sha256.h"

namespace pk::bench {

class digest {
 public:
  /// Adds the bytes, prefixed by their length, so that ("ab","c") and ("a","bc") differ.
  digest& add(std::string_view bytes) {
    h_.update(fmt::format("{}:", bytes.size()));
    h_.update(bytes);
    return *this;
  }
  /// Adds a file's bytes (as add() does); throws std::system_error naming it if it cannot be read.
  digest& add_file(const std::filesystem::path& path) { return add(read_file(path)); }
  /// The first 64 bits of the digest.
  std::uint64_t value() const {
    const auto bytes = sha256(h_).bytes();
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | bytes[i];
    return v;
  }
  /// The whole digest, 64 hex digits.
  std::string hex() const { return sha256(h_).hex(); }

 private:
  sha256 h_;
};

}  // namespace pk::bench
