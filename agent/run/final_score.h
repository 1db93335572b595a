// Final scoring of an ended episode: its solution.py on hidden seeds, with the full number of
// trials and timing, in a fresh evaluation sandbox under a lease of an uncapped holder of its own
// (so an episode that spent its GPU budget is still scored). This is the number every report uses.
#pragma once

#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>

#include "agent/limits.h"
#include "bench/eval/evaluate.h"
#include "bench/metrics/result.h"
#include "agent/run/scheduler/gpu_scheduler.h"

namespace pk::run {

/// Scores `solution` under a lease from `who`; `o` carries world, device, trials and timing.
/// A solution file that is missing scores as the judge's verdict for it (never an exception).
bench::eval_report score_solution(const bench::problem& problem, const std::filesystem::path& solution,
                                  bench::eval_options o, scheduler::gpu_scheduler& gpus, scheduler::holder who,
                                  std::stop_token stop = {});

/// What the episode was, for the result record.
struct episode_facts {
  std::string run_id;
  metrics::run_mode mode = metrics::run_mode::agent;
  std::string model;
  bool prices_known = true;     ///< false: the model has no prices, its dollars are unknown
  int sample = 0;
  std::string end_reason;
  agent::usage_so_far used;
  double gpu_seconds = 0;       ///< pkb leases plus final scoring
  std::string transcript;       ///< relative to the run directory
};

/// The fields of a result that do not depend on the judge: run, problem, sample, spend, end reason,
/// transcript (the verdict left empty).
metrics::episode_result episode_record(const bench::problem& p, int world, const episode_facts& f);

metrics::episode_result make_result(const bench::problem& p, const bench::eval_report& r, const episode_facts& f);

/// The runner's verdict for an episode that left nothing to judge (docs/results.md).
inline constexpr std::string_view no_submission_verdict = "no_submission";

/// Why `solution` holds nothing to judge, if it does not: it is missing, or it is still the task's
/// `stub` (the solution.py every episode starts from; empty: none to compare with).
std::optional<std::string> nothing_submitted(const std::filesystem::path& solution, const std::filesystem::path& stub);

/// The result of an episode that left nothing to judge: verdict no_submission, not correct, not
/// timed, on `device` (where it would have been scored).
metrics::episode_result unjudged_result(const bench::problem& p, int world, bench::device_kind device,
                                        const episode_facts& f);

/// Correct, with a speedup beyond the reference's own noise (the progress display's "faster").
bool faster_beyond_noise(const metrics::episode_result& r);

}  // namespace pk::run
