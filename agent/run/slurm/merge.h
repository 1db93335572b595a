// The merge of a sharded run: OUT/results.jsonl written from every shard's results, one line per
// episode in (problem, sample) order, and OUT/report.md from it. Deterministic: the same files give
// the same bytes whatever order the shards finished in. An episode whose shard ended before
// scoring it (cancelled, time limit, node lost, failed at start) gets an infrastructure-failure
// line (verdict harness_error, end_reason shard_lost), which a resumed run replaces.
#pragma once

#include <filesystem>
#include <optional>

#include "agent/run/slurm/run_status.h"
#include "bench/suite/problem.h"

namespace pk::run {

struct merge_summary {
  int episodes = 0;        ///< of the plan
  int scored = 0;          ///< real results
  int infrastructure = 0;  ///< infrastructure-failure lines (harness errors and lost episodes)
  int waiting = 0;         ///< left out: their shard is still pending or running, or not run yet
  int skipped_lines = 0;   ///< unreadable lines of the shards' files
};

/// Merges the run in `out` as `status` (read_status) sees it; `suite` names the problems' stems
/// and categories for the lines of lost episodes. Writes OUT/results.jsonl and OUT/report.md.
merge_summary merge_run(const std::filesystem::path& out, const run_status& status,
                        const std::vector<bench::problem>& suite);

/// `pkagent run --merge OUT`: merge_run over the suite in `suite_dir` (empty: the default one),
/// then a line saying what was written. Returns the exit code.
int merge_command(const std::filesystem::path& out, const std::filesystem::path& suite_dir);

}  // namespace pk::run
