// What `pkagent eval` found: the verdict, per-trial and per-rank details, timings, speedup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/device_kind.h"

namespace pk::bench {

/// The judge's verdicts. `correct` is the only passing one. `forbidden`: the candidate did what no
/// solution may, whatever else it did; `forbidden_reason` says what (docs/integrity.md).
enum class verdict { correct, mismatch, compile_error, runtime_error, timeout, forbidden };
std::string to_string(verdict v);

/// What a `forbidden` verdict caught.
enum class forbidden_reason {
  none,
  multicast,   ///< NVLink multicast in the candidate or what its run produced
  tampering,   ///< the judge's channel or files were interfered with
  background,  ///< processes or threads left running after the candidate's calls
};
std::string to_string(forbidden_reason r);

/// Times of one function's calls, each the maximum over ranks of that call.
struct timing_stats {
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  int calls = 0;
};
timing_stats stats_of(std::vector<double> ms);

/// Where the true speedup lies at `confidence`: from the median of the pairs' ratios (each the
/// reference's block against the candidate's neighbouring block), by the sign test.
struct speedup_interval {
  double low = 0, high = 0, confidence = 0;
  int pairs = 0;

  bool holds(double x) const { return low <= x && x <= high; }
};

/// "1.003x (99.9% interval 0.991-1.012 over 80 pairs: the same as the reference within ±1.2%)", or
/// "faster" / "slower" where the interval leaves out 1.
std::string speedup_text(double speedup, const std::optional<speedup_interval>& interval);

struct rank_check {
  int rank = 0;
  bool ok = true;
  std::string message;  ///< the first failing leaf ("output[0]: shape ... but ..."), empty when ok
  double max_abs_error = 0, max_rel_error = 0;
  unsigned long long mismatches = 0;
  /// A checked timed call whose record is not the output its timing block committed to: the
  /// block did not run the calls it reported (verdict `forbidden`, reason tampering).
  bool forged = false;
};

struct trial_report {
  int trial = 0;
  bool correct = true;
  std::vector<rank_check> ranks;
  int checked_calls = 0;          ///< timed calls whose outputs were compared too
  std::vector<std::string> timing_flags;  ///< what the timing cross-checks found
  bool wall_clock = false;        ///< timed by the judge's wall-clock (the candidate's clock failed)
  std::optional<timing_stats> reference, candidate;
  std::optional<double> speedup;  ///< the median of the pairs' ratios (reference / candidate)
  std::optional<speedup_interval> interval;
};

struct eval_report {
  std::string problem;   ///< "<id>_<stem>"
  std::string upstream;  ///< upstream mode: the ParallelKernelBench checkout; empty otherwise
  std::string solution;  ///< the candidate file as given
  int world = 0;
  device_kind device = default_device;
  std::string dtype;
  int trials_requested = 0;
  verdict result = verdict::runtime_error;
  forbidden_reason reason = forbidden_reason::none;
  std::string message;   ///< one paragraph: why this verdict
  std::string log;       ///< stderr tail of the rank that failed, when one did
  std::vector<trial_report> trials;
  std::optional<timing_stats> reference, candidate;  ///< pooled over trials
  std::optional<double> speedup;             ///< pooled over every trial's pairs
  std::optional<speedup_interval> interval;
  double max_abs_error = 0, max_rel_error = 0;  ///< over every compared call, rank and element
  std::vector<std::string> timing_flags;        ///< every trial's, prefixed with the trial
  std::optional<double> roofline_ms;
  std::string roofline_limiter;
  std::string roofline_missing;  ///< why there is no bound, when the run said (no spec matches its machine)
  bool reference_cached = false;  ///< the reference outputs came from the cache
  double wall_seconds = 0;
  std::vector<std::pair<std::string, double>> steps;  ///< seconds per step of the run (ready, trial k ...)
  std::string sandbox;            ///< "bwrap" or "none"

  bool ok() const { return result == verdict::correct; }
};

nlohmann::json to_json(const eval_report& r);
/// The human-readable form printed by `pkagent eval`.
std::string render_text(const eval_report& r);

}  // namespace pk::bench
