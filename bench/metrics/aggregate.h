// From episode results to the numbers a report shows: per problem, per category and per run.
// Every rate over several problems is a mean over problems (each problem counts once, whatever its
// number of samples), with a bootstrap interval that resamples problems.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "bench/metrics/bootstrap.h"
#include "bench/metrics/result.h"

namespace pk::metrics {

/// fast_p thresholds reported everywhere.
inline constexpr std::array<double, 3> fast_thresholds = {1.0, 1.5, 2.0};

/// Correct, timed, and faster than p beyond the timing noise: speedup > max(p, 1 + noise).
/// With zero noise this is KernelBench's fast_p; for p = 1 it refuses speedups within the noise.
bool is_fast(const episode_result& result, double p);

struct spend {
  std::int64_t tokens_in = 0;
  std::int64_t tokens_out = 0;
  double dollars = 0;       // of the episodes whose prices are known
  int unpriced = 0;         // episodes whose model has no known prices (their dollars are unknown)
  double gpu_seconds = 0;
  double wall_seconds = 0;

  std::int64_t tokens() const { return tokens_in + tokens_out; }
  spend& operator+=(const spend& other);
};

struct problem_stats {
  int id = 0;
  std::string stem;
  category problem_category = category::primitive;
  int samples = 0;
  int correct = 0;
  std::array<int, fast_thresholds.size()> fast{};  // samples that are fast_p, per threshold
  std::vector<double> speedups;                    // of correct, timed samples
  std::vector<double> noises;                      // their noise bounds
  std::vector<double> roofline_fractions;          // of correct, timed samples with a bound
  std::map<std::string, int> verdicts;  // a forbidden verdict with its reason: "forbidden (tampering)"
  std::map<std::string, int> end_reasons;          // why each sample's episode ended
  spend total;

  double pass_at(int k) const;                  // 1 <= k <= samples
  double fast_at(std::size_t p, int k) const;   // fast_p@k, p indexes fast_thresholds
  std::optional<double> geomean_speedup() const;
  std::optional<double> median_noise() const;
};

struct estimate {
  double value = 0;
  std::optional<interval> ci;  // 95% bootstrap interval over problems
};

struct group_stats {
  int problems = 0;
  int episodes = 0;
  int min_samples = 0;  // pass@k is reported for k = 1 .. min_samples
  int solved = 0;       // problems with at least one correct sample
  std::array<int, fast_thresholds.size()> solved_fast{};
  estimate correct;     // mean per-problem rate of correct samples (= pass@1)
  std::array<estimate, fast_thresholds.size()> fast;  // mean per-problem fast_p rate
  std::vector<estimate> pass_at_k;                    // [k - 1]
  std::array<std::vector<estimate>, fast_thresholds.size()> fast_at_k;
  std::optional<estimate> geomean_speedup;  // over problems with a correct timed sample
  std::optional<double> median_roofline_fraction;  // over every correct timed solution with a bound
  std::map<std::string, int> end_reasons;  // over every episode: why it ended (submitted, step_limit ...)
  spend total;
  double dollars_per_problem = 0;
  double tokens_per_problem = 0;
  double gpu_seconds_per_problem = 0;
  std::optional<double> dollars_per_success;  // per correct sample
  std::optional<double> tokens_per_success;
};

struct run_summary {
  std::string run_id;
  run_mode mode = run_mode::agent;
  std::string model;
  /// The devices its results were scored on: one, both (a mixed run), or none where its results
  /// do not say (version 1).
  std::set<bench::device_kind> devices;
  std::vector<problem_stats> problems;  // by problem id
  group_stats overall;
  std::vector<std::pair<category, group_stats>> categories;  // those present, in all_categories order
  int infrastructure_failures = 0;  // episodes that could not run (is_infrastructure_failure), counted as failures
  std::optional<group_stats> without_infrastructure;  // overall, those episodes left out; set when some exist
  /// Forbidden verdicts (reward hacks the judge caught) by reason; "unspecified" where a result
  /// names none (results before version 3).
  std::map<std::string, int> forbidden;
  int forbidden_total() const;
};

/// "forbidden (tampering)" for a forbidden verdict with a reason, else the verdict.
std::string verdict_with_reason(const episode_result& result);

/// The median of `values`; nullopt when there are none.
std::optional<double> median(std::vector<double> values);

/// Per-problem statistics of one run's results (any order). Throws std::invalid_argument when the
/// results disagree about a problem (stem, category) or mix runs.
std::vector<problem_stats> problem_statistics(std::span<const episode_result> results);

group_stats aggregate(std::span<const problem_stats> problems, const bootstrap_options& options);

/// Splits results by (run id, mode, model) and summarises each run, in order of first appearance.
std::vector<run_summary> summarize(std::span<const episode_result> results, const bootstrap_options& options);

}  // namespace pk::metrics
