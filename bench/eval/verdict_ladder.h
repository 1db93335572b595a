// The verdict of one evaluation, decided in one place: a ladder of rungs, highest first. The first
// rung whose evidence holds is the verdict, whatever the rungs below it hold:
//   source scan     NVLink multicast in the solution's source: forbidden (multicast), nothing ran
//   guard refusal   the run-time guard refused multicast in a candidate process: forbidden (multicast)
//   post-run scan   multicast in what the run left (workspace, JIT builds): forbidden (multicast)
//   background      work the candidate left running after its calls: forbidden (background)
//   set failure     the candidate's set failed (failure_verdict.h says which verdict); a failure of
//                   the reference's set or of the input generator is the judge's own error, except
//                   the reference running out of the GPU memory it shares with the candidate
//   forged record   a checked call's record is not what its block committed to: forbidden (tampering)
//   mismatch        an output is not the reference's
//   correct         (with a message when the timings are missing)
// Multicast is forbidden on the host whatever else the run did, so its rungs come first; work left
// running can be what made a set fail or an output wrong, so it beats them; a forged record is
// tampering, which beats the wrong output it may hide. Evidence that costs work (the post-run scan,
// judging the records) is gathered only when every rung above it came up empty.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/eval/eval_report.h"
#include "bench/eval/failure_verdict.h"
#include "bench/eval/sets/rank_set.h"

namespace pk::bench {

enum class verdict_rung {
  source_scan,
  guard_refusal,
  post_run_scan,
  background,
  set_failure,
  forged_record,
  mismatch,
  correct,
};
std::string to_string(verdict_rung r);

/// A process set that failed, and how its ranks ended (for the message and the failing rank's log).
struct failed_set {
  rank_failure failure;
  set_role set = set_role::candidate;
  const rank_set_ending* ending = nullptr;
};

/// What an evaluation found, one field per rung.
struct verdict_evidence {
  std::string problem;             ///< its name, for the judge's own error
  std::string source_multicast;    ///< what the source scan found, described; empty: nothing
  std::string guard_refusals;      ///< what the run-time guard refused, one per line; empty: nothing
  /// Scans what the run left and describes any multicast found (empty: nothing); null: not run.
  std::function<std::string()> post_run_multicast;
  std::vector<std::string> background;  ///< work left running, one item each
  std::optional<failed_set> failure;
  /// Judges the run's records into the report (trials, their rank checks, timings); null: no run.
  std::function<const eval_report&()> judge_records;
  bool perf = false;  ///< timings were asked for
  /// The sets shared GPUs: the reference's GPU memory is then only what the candidate left.
  bool shared_gpus = false;
};

/// The rung that decided, and the verdict with its reason, message and the failing rank's log.
struct ladder_verdict {
  verdict_rung rung = verdict_rung::correct;
  failure_verdict verdict;
};

/// Climbs the ladder. Throws evaluation_error (evaluate.h) when the set-failure rung finds the
/// reference's set, or the input generator, failed: the problem is broken, not the candidate.
ladder_verdict decide_verdict(const verdict_evidence& e);

}  // namespace pk::bench
