// Can a problem tell a wrong answer from a right one? `pkagent problems --check` judges the reference
// as its own candidate (it must be `correct`), then wrong candidates generated from the reference
// (bench/qa/wrong_candidate.py): every collective a no-op, every collective local-only, outputs
// replaced by zeros, by the unmodified inputs, and by rank 0's outputs on every rank. Each must get
// a verdict other than `correct` from the real evaluator; one that passes means the problem's inputs
// or tolerances make its check vacuous. All of them run in one start of the ranks (trial t judges one
// mode; wrong_candidate.py), and each on its own only if that run ends without per-trial results.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/evaluate.h"
#include "bench/suite/problem.h"

namespace pk::bench {

/// The generated wrong candidates, in check order.
const std::vector<std::string>& wrong_candidate_modes();

struct wrong_candidate_verdict {
  std::string mode;     ///< "no_comm", "local_only", "zeros", "inputs", "rank0_output"
  bool applicable = true;
  std::string verdict;  ///< the judge's verdict; empty when not applicable
  std::string note;     ///< why not applicable, or the judge's message
  /// `correct` at one of the problem's degenerate worlds for a mode that only skips communication (at
  /// W = 1 also the unmodified inputs): where nothing is exchanged that is a right answer, not a
  /// vacuous check.
  bool right_here = false;
};

struct discrimination_result {
  std::string problem;  ///< "<id>_<stem>"
  int world = 0;
  bool degenerate = false;       ///< the world size is one of the problem's [degenerate] worlds
  std::string degenerate_why;    ///< the problem's reason, when degenerate
  std::string reference_verdict; ///< the reference as its own candidate; "error" when the evaluator failed
  std::string reference_note;
  std::vector<wrong_candidate_verdict> candidates;
  double wall_seconds = 0;
  /// The reference is correct and no applicable wrong candidate is (except where right_here).
  bool ok() const;
};

/// Runs the check for one problem with the evaluator's options (perf is switched off; `trials` per
/// mode). Candidate files go to a scratch directory; the reference's outputs come from (and fill) the
/// cache.
discrimination_result check_discrimination(const problem& p, const eval_options& o);

nlohmann::json to_json(const discrimination_result& r);
/// One line per problem: the verdicts in wrong_candidate_modes() order ("VACUOUS" marks a `correct`,
/// "right here" a right_here one).
std::string render_table(const std::vector<discrimination_result>& results);

}  // namespace pk::bench
