// The protocol of one evaluation between the judge and its two process sets: the candidate's, and
// the reference's where the reference must run (for outputs not yet cached, and for timing).
//
//   ready      both sets import their code and join their process groups (compile timeout)
//   trial k    both sets call `solution` on the trial's inputs, built in each rank from a seed of
//              its own, and record what they returned (the reference only where not cached)
//   timing k   warm-up blocks, then timed pairs: the same per-call seeds run in a reference block
//              and a candidate block, in the order A B B A A B ...; after a few pairs chosen in
//              secret, both sets record one call chosen in secret, so that timed calls are checked
//              calls (after each timed block the set commits to its outputs, output_commit.h, and
//              the candidate's record must be what it committed to); null blocks measure the
//              mechanics
//   shutdown   both sets leave their process groups
//
// Every command has a deadline. The conductor stops at the first failure of either set and says
// which set failed and how; it decides no verdict (evaluate.cc does, from its outcome and files).
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/eval/output_commit.h"
#include "bench/eval/seeds.h"
#include "bench/eval/sets/rank_set.h"
#include "bench/eval/timing_plan.h"

namespace pk::bench {

struct conduct_plan {
  std::vector<int> trials;
  std::set<int> reference_trials;  ///< trials whose reference outputs the reference set records
  bool perf = false;
  timing_options timing;
  double compile_timeout_s = 600;  ///< start-up, imports and JIT compilation
  double phase_timeout_s = 120;    ///< every command after that
  bool sandboxed = true;           ///< each set has a pid namespace of its own (for the census)
  std::function<void(const std::string&)> progress;
};

/// A timed call both sets recorded: <file> in each set's rank<r>/.
struct check_record {
  int trial = 0;
  std::string file;
  std::vector<std::vector<bool>> mutated;  ///< per rank: which inputs the reference's call changed
  /// Per rank: what the candidate's block committed to for this call's outputs (output_commit.h).
  std::vector<std::vector<tensor_commit>> committed;
};

struct trial_record {
  int trial = 0;
  std::string file;                                       ///< trial<k>.st in each set's rank<r>/
  std::optional<std::vector<std::vector<bool>>> mutated;  ///< per rank, when the reference ran it
  std::vector<block_record> blocks;
  std::optional<trial_timing> timing;
};

struct conduct_outcome {
  std::vector<trial_record> trials;   ///< the trials both sets finished
  std::vector<check_record> checks;
  std::optional<rank_failure> failure;
  set_role failed = set_role::candidate;
  /// Work the candidate left running: processes alive after its calls, Python threads it started.
  std::vector<std::string> background;
  /// Wall-clock seconds of each step ("ready", "trial 0", "timing 0", ..., "shutdown").
  std::vector<std::pair<std::string, double>> steps;
};

/// Runs the protocol. `reference` may be null when its set is not needed (no timing, all trials
/// cached). `seeds` gives the input seeds, `secret` (never reproducible) the choice of checked calls.
conduct_outcome conduct(rank_set* reference, rank_set& candidate, const conduct_plan& plan, seed_source& seeds,
                        seed_source& secret);

}  // namespace pk::bench
