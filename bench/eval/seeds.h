// Where an evaluation's input seeds come from. Every input of every trial and every timed call is
// built from its own seed, one per rank, drawn by the judge and handed to a rank only for the call
// it is about to make: a rank cannot compute another rank's inputs (so no rank can skip the
// communication by computing everybody's answer) nor the next call's (so no answer can be prepared
// or cached ahead).
//
// A visible base seed (`pkagent eval --seed`, `pkb check`) makes the sequence reproducible, which
// is what lets the reference's outputs be cached. Its seeds are keyed hashes (SHA-256) of the base
// seed, a stream and a counter under the judge's own key, a random file in its cache that no
// sandbox sees:
// the same base and key give the same seeds, yet no seed a rank is handed tells anything about
// another (a plain generator such as splitmix64 can be inverted from one output). Final scoring
// draws from the kernel's random source instead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace pk::bench {

class seed_source {
 public:
  /// A reproducible sequence from a visible base seed, keyed with `key` (judge_seed_key()).
  static seed_source from_base(long long base, std::string key);
  /// An unpredictable sequence (getrandom).
  static seed_source secret();

  /// The next seed: a non-negative 63-bit integer (it travels as JSON to Python).
  std::int64_t next();
  /// An independent sequence named `stream`: from a visible base, a function of the base and
  /// `stream` alone, however many seeds were drawn before (so a trial's inputs do not depend on how
  /// many timed calls preceded it, and its cached reference outputs stay valid); from a secret
  /// source, secret too.
  seed_source derive(std::uint64_t stream) const;
  /// Whether the sequence follows from a visible base seed (and may key a cache).
  bool reproducible() const { return base_.has_value(); }

 private:
  seed_source(std::optional<long long> base, std::string key) : base_(base), key_(std::move(key)) {}
  std::optional<long long> base_;  ///< empty: draw from the kernel
  std::string key_;
  std::uint64_t stream_ = 0;       ///< 0: from_base()'s own sequence; derive(s): s + 1
  std::uint64_t counter_ = 0;
};

/// The judge's seed key in `dir` (its cache directory, hidden from every sandbox): read from
/// `dir`/seed-key, or made there from the kernel's random source the first time.
std::string judge_seed_key(const std::filesystem::path& dir);

/// A short public name of a key (a digest prefix), for cache keys: outputs cached under one key
/// are never reused with another's seeds.
std::string seed_key_id(const std::string& key);

}  // namespace pk::bench
