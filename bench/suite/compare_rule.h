// How the judge compares one recorded leaf (an output, or an input whose post-call value is part of
// the answer) with the reference's: a mode and its parameters, declared per leaf in problem.toml
// (docs/problem_format.md, "Comparison").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/toml_reader.h"

namespace pk::bench {

/// allclose: |got - want| <= atol + rtol * |want| per element (floats; integers must be equal).
/// exact: every element equal (NaN meets NaN). norm: ||got - want||_2 <= max_rel_norm * ||want||_2
/// over the whole leaf. ulp: floating codes at most max_ulp representable values apart (fp8, bf16 ...).
/// rank: integer ranks of an item among keys, tie-aware. index: integer indices into keys, tie-aware.
enum class compare_mode { allclose, exact, norm, ulp, rank, index };

std::string_view to_string(compare_mode m);
std::optional<compare_mode> parse_compare_mode(std::string_view name);

struct compare_rule {
  compare_mode mode = compare_mode::allclose;
  double atol = 1e-2;
  double rtol = 1e-2;
  double max_rel_norm = 0;            ///< norm
  std::int64_t max_ulp = 0;           ///< ulp
  /// allclose, exact, ulp: the share of elements allowed to fail (discrete flips such as routing).
  double max_mismatch_fraction = 0;
  /// rank, index: the judge data (a function of inputs.py, run with the reference) holding the keys.
  std::string keys;
  bool descending = true;             ///< rank, index: keys sorted from the largest

  /// One line for listings and the model's task text, e.g. "allclose (atol 0.01, rtol 0.01)".
  std::string describe() const;

  static compare_rule allclose(double atol, double rtol);
  static compare_rule of(compare_mode mode);  ///< the mode with default parameters
};

/// The rules of a problem: one per declared path, and the fallback for every other leaf.
struct compare_spec {
  compare_rule fallback;
  std::vector<std::pair<std::string, compare_rule>> rules;  ///< declared path -> rule

  /// The rule of a recorded leaf ("output[1]", "input[0][2]"): the longest declared path that is the
  /// leaf itself or one of its ancestors, else the fallback.
  const compare_rule& rule_for(std::string_view path) const;

  /// Every leaf by one rule.
  static compare_spec uniform(const compare_rule& rule);
};

/// Reads a rule's keys (mode, atol, rtol, max_rel_norm, max_ulp, max_mismatch_fraction, keys,
/// descending) from `r`, starting from `fallback` (the problem's atol and rtol); refuses keys that do
/// not belong to the mode and missing required ones, naming the key.
compare_rule read_compare_rule(config::table_reader& r, const compare_rule& fallback);

}  // namespace pk::bench
