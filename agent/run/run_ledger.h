// What a run has done so far, read from every file that records it: OUT/results.jsonl and each
// shard's results file, and, for an episode without a result, what its transcript says it spent.
// Shards on different hosts read it to skip scored episodes and to keep the run's dollar limit;
// the merge (merge.h) writes OUT/results.jsonl from it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent/run/slurm/shard.h"
#include "bench/metrics/results_file.h"
#include "bench/suite/problem.h"

namespace pk::run {

struct run_ledger {
  std::map<episode_ref, metrics::episode_result> results;  ///< one per episode of the run
  std::vector<metrics::skipped_line> skipped;              ///< unreadable lines of its files
};

/// The results files of a run: OUT/results.jsonl and OUT/shards/*/results.jsonl, those present.
std::vector<std::filesystem::path> results_files(const std::filesystem::path& out);

/// Reads the results of run `run_id` from results_files(out). Per episode a real result wins over
/// an infrastructure failure; of real ones in two files (one episode scored by two processes) the
/// one whose JSON sorts first, so the choice depends on neither file nor completion order. Within
/// one file the reader's rule holds (results_file.h).
run_ledger read_ledger(const std::filesystem::path& out, const std::string& run_id);

struct model_spend {
  std::int64_t tokens_in = 0, tokens_out = 0;
  double dollars = 0;
};

/// What the model calls recorded in an episode directory's latest transcript cost (a resumed
/// episode's transcript records the replayed replies with their cost, so it holds the earlier ones).
model_spend transcript_spend(const std::filesystem::path& episode_dir);

/// Model dollars run `run_id` has spent in all: each scored episode's, and for every other episode
/// directory under OUT/episodes, its transcript's (episodes running now or lost included).
double run_dollars(const std::filesystem::path& out, const std::string& run_id);

/// The run's facts a result carries.
struct run_facts {
  std::string run_id;
  metrics::run_mode mode = metrics::run_mode::agent;
  std::string model;
  int world = 2;
  bench::device_kind device = bench::default_device;  ///< where the run scores (every result names it)
};

/// The result of an episode the infrastructure could not run or score (verdict harness_error):
/// `end_reason` says why ("harness_error": pkagent raised; "shard_lost": its shard ended first),
/// tokens and dollars are what its transcript recorded, and a rerun retries it.
metrics::episode_result infrastructure_failure(const std::filesystem::path& out, const bench::problem& p, int sample,
                                               const run_facts& facts, const std::string& end_reason);

}  // namespace pk::run
