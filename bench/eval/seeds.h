// Where an evaluation's input seeds come from. Every input of every trial and every timed call is
// built from its own seed, one per rank, drawn by the judge and handed to a rank only for the call
// it is about to make: a rank cannot compute another rank's inputs (so no rank can skip the
// communication by computing everybody's answer) nor the next call's (so no answer can be prepared
// or cached ahead).
//
// A visible base seed (`pkagent eval --seed`, `pkb check`) makes the sequence reproducible, which
// is what lets the reference's outputs be cached; final scoring draws from the kernel's random
// source instead, so nothing anywhere (code, plan files, a process's memory) tells what comes next.
#pragma once

#include <cstdint>
#include <optional>

namespace pk::bench {

class seed_source {
 public:
  /// A reproducible sequence from a visible base seed.
  static seed_source from_base(long long base);
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
  bool reproducible() const { return state_.has_value(); }

 private:
  explicit seed_source(std::optional<std::uint64_t> state) : state_(state), origin_(state) {}
  std::optional<std::uint64_t> state_;   ///< splitmix64's state; empty: draw from the kernel
  std::optional<std::uint64_t> origin_;  ///< the state it started from (derive() starts from it)
};

}  // namespace pk::bench
