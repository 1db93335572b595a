// Judging what the two process sets recorded: per trial and per checked timing call, each rank's
// candidate file against the reference's (bench/eval/tensor_compare.h), and the trials' timings into the
// report. The candidate's files are read only after its process set has ended, without following
// links (bench/eval/untrusted_file.h), and no larger than a few times the reference's.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include "bench/eval/conductor.h"
#include "bench/eval/eval_report.h"
#include "bench/eval/output_commit.h"
#include "bench/eval/tensor_compare.h"

namespace pk::bench {

/// One recorded call of one rank: where both sets' files are, and which inputs the reference's
/// call changed (those the candidate may change too).
struct recorded_call {
  int rank = 0;
  std::filesystem::path candidate_root;  ///< the candidate set's output directory
  std::filesystem::path candidate_file;  ///< relative to it
  std::filesystem::path reference_file;  ///< trusted
  std::vector<bool> mutated;
  /// A checked timed call: what the candidate's block committed to for its outputs.
  const std::vector<tensor_commit>* committed = nullptr;
};

/// Compares one recorded call; a missing, malformed or refused candidate file fails the rank, a
/// record that is not what its block committed to is `forged`.
rank_check judge_call(const recorded_call& call, const judge_rules& rules);

/// Folds a rank's check into the report's pooled errors.
void add_errors(eval_report& r, const rank_check& c);

/// Where the reference's outputs of a run are.
struct reference_outputs {
  std::function<std::filesystem::path(int trial, int rank)> file;  ///< a trial's (cache or live)
  std::filesystem::path live_out;  ///< the reference set's output directory (checked calls)
  std::map<int, std::vector<std::vector<bool>>> mutated;  ///< per trial and rank
};

/// Judges every trial and checked call of `run` into `rep`: each trial's rank checks, the pooled
/// errors, and (with `perf`) the timings, pooled where every trial was correct. The verdict they
/// lead to is the ladder's (bench/eval/verdict_ladder.h).
void judge_run(eval_report& rep, const conduct_outcome& run, const reference_outputs& refs,
               const std::filesystem::path& candidate_out, int world, const judge_rules& rules, bool perf);

}  // namespace pk::bench
