// Judging what the two process sets recorded: per trial and per checked timing call, each rank's
// candidate file against the reference's (bench/eval/compare.h), and the trials' timings into the
// report. The candidate's files are read only after its process set has ended, without following
// links (bench/eval/untrusted_file.h), and no larger than a few times the reference's.
#pragma once

#include <filesystem>
#include <vector>

#include "bench/eval/compare.h"
#include "bench/eval/report.h"

namespace pk::bench {

/// One recorded call of one rank: where both sets' files are, and which inputs the reference's
/// call changed (those the candidate may change too).
struct recorded_call {
  int rank = 0;
  std::filesystem::path candidate_root;  ///< the candidate set's output directory
  std::filesystem::path candidate_file;  ///< relative to it
  std::filesystem::path reference_file;  ///< trusted
  std::vector<bool> mutated;
};

/// Compares one recorded call; a missing, malformed or refused candidate file fails the rank.
rank_check judge_call(const recorded_call& call, tolerance tol);

/// Folds a rank's check into the report's pooled errors.
void add_errors(eval_report& r, const rank_check& c);

/// Fills the trial's and the report's timing statistics and flags (pooled over trials).
void summarize_timing(eval_report& r, trial_report& t, const std::vector<double>& reference_ms,
                      const std::vector<double>& candidate_ms, const std::vector<std::string>& flags, bool wall_clock);
void summarize_pooled_timing(eval_report& r, const std::vector<double>& reference_ms,
                             const std::vector<double>& candidate_ms);

}  // namespace pk::bench
