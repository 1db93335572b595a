// What is left of a run: the episodes earlier invocations on the same run directory scored, and
// the ones still to run, in the order they start.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "agent/run/run_plan.h"
#include "bench/metrics/result.h"
#include "bench/suite/problem.h"

namespace pk::run {

/// One episode of the plan: a problem and a sample number.
struct episode_slot {
  const bench::problem* problem = nullptr;
  int sample = 0;
};

struct run_backlog {
  int episodes = 0;                             ///< in the plan
  int skipped = 0;                              ///< of those, scored by earlier invocations
  std::vector<metrics::episode_result> scored;  ///< every result of this run recorded earlier
  std::vector<episode_slot> pending;            ///< still to run, in the order they start
};

/// Sorts `o.samples` samples of every problem (those of `o.part` where set) into scored and
/// pending, from the run's results files (read_ledger: lines of run `run_id` only, every shard's).
/// An infrastructure failure stays pending, to be run again. An episode whose result.json was
/// written but whose results line was not (a crash between the two) gets its line appended now and
/// counts as scored; an unreadable result.json leaves it pending, to be scored again.
///
/// Pending episodes are sample-major (every problem's sample 0, then every sample 1 ...): episodes
/// that run at once are of different problems, so a problem's reference outputs are computed by
/// its first final scoring and found in the cache by the later ones, not computed by two at a time.
run_backlog take_stock(const run_options& o, const std::string& run_id, const std::vector<bench::problem>& problems);

}  // namespace pk::run
