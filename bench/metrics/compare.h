// Two runs side by side (typically agent against zero-shot) on the problems both attempted:
// at equal k (same number of samples per problem) and at equal spend (same budget per problem,
// which buys each run as many samples as its mean cost per sample allows).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/metrics/aggregate.h"

namespace pk::metrics {

struct equal_k_row {
  int k = 0;
  double a = 0;  // pass@k (or fast_1@k) of run a over the common problems
  double b = 0;
  std::optional<interval> diff;  // 95% paired bootstrap interval of a - b
};

struct equal_spend_row {
  double budget = 0;  // per problem, in spend_unit
  int k_a = 0;        // samples that budget buys each run
  int k_b = 0;
  std::optional<double> a;  // pass@k_a; nullopt when k_a exceeds the samples run a has
  std::optional<double> b;
  std::optional<interval> diff;
};

struct comparison {
  std::vector<int> common_problems;
  int max_k = 0;  // k = 1 .. max_k are comparable (the fewer samples of the two)
  std::vector<equal_k_row> pass;
  std::vector<equal_k_row> fast1;
  std::string spend_unit;  // "dollars" or "tokens"; empty when spend cannot be compared
  double spend_per_sample_a = 0;
  double spend_per_sample_b = 0;
  std::vector<equal_spend_row> equal_spend;
  std::string note;  // why a part is missing, for the reader of the report
};

comparison compare(const run_summary& a, const run_summary& b, const bootstrap_options& options);

}  // namespace pk::metrics
