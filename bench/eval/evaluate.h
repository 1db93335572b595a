// One evaluation of a candidate against a problem: the candidate's process set and, where needed,
// the reference's, each in its own sandbox, driven by the judge (bench/eval/conductor.h) through
// every trial and the timing; then the verdict from what they recorded (bench/eval/judging.h).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/device_kind.h"
#include "bench/eval/eval_report.h"
#include "bench/eval/reference_cache.h"
#include "bench/eval/sets/warm_pool.h"
#include "bench/eval/timing_plan.h"
#include "bench/suite/hardware_spec.h"
#include "bench/suite/problem.h"
#include "sandbox/sandbox.h"

namespace pk::bench {

struct eval_options {
  int world = 2;
  int trials = 5;
  bool perf = true;
  device_kind device = default_device;  ///< cuda (NCCL) or cpu (gloo)
  long long seed = 42;          ///< visible base seed of the inputs (reproducible; keys the reference cache)
  /// Draw every input seed from the kernel's random source instead of `seed` (final scoring):
  /// nothing anywhere tells what the inputs will be.
  bool secret_seeds = false;
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  double timeout_s = 120;          ///< per command of the judge (each trial, each timing block)
  double compile_timeout_s = 600;  ///< start-up, imports and JIT compilation
  std::vector<int> gpus;           ///< host GPU indices; empty = 0 .. world-1
  timing_options timing;
  std::filesystem::path cache_root;  ///< empty = reference_cache::default_root()
  /// Further host directories no process set may read, besides pkagent's tree and caches (which
  /// are always hidden): a run's directory, with its other episodes' solutions and transcripts.
  std::vector<std::filesystem::path> hidden;
  std::optional<hardware_spec> hardware;  ///< for the roofline line
  std::string no_hardware;  ///< without `hardware`: why there is no bound (bench::machine::missing_spec), for the report
  bool keep_workspace = false;
  std::function<void(const std::string&)> progress;  ///< progress lines (stderr in the CLI)
  /// Process sets started ahead of need (a run keeps one pool); null: every set is started now.
  warm_pool* pool = nullptr;
};

/// A problem or its reference failed: our bug or a broken environment, not the candidate's.
class evaluation_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Checks the options against the problem and the machine; throws std::invalid_argument with
/// the fix (unsupported world size, more ranks than GPUs, missing solution file ...).
void check_options(const problem& p, const std::filesystem::path& solution, const eval_options& o);

/// Runs the evaluation. Candidate failures are verdicts in the report; evaluation_error when
/// the reference itself fails.
eval_report evaluate(const problem& p, const std::filesystem::path& solution, const eval_options& o);

/// Starts in the run's pool (o.pool; nothing without one) the sets an evaluation with these
/// options takes, so that an episode's first `pkb check` finds them started while the model
/// thinks. On CUDA only where o.gpus names the GPUs: a lease's are known when it is granted.
/// A set that cannot start is left to the evaluation that needs it, which reports why.
void warm_sets(const eval_options& o);

/// The reference cache's key for an evaluation with a visible base seed: the seed, the judge's
/// seed key (its seeds follow from both), world, device and dtype.
reference_key reference_key_of(const problem& p, const eval_options& o);

/// Where the judge remembers binaries its multicast scan found clean (by content), for this
/// evaluation's cache; out of every sandbox's reach. Shared with `pkb run`'s pre-run scan.
std::filesystem::path multicast_clean_cache(const eval_options& o);


}  // namespace pk::bench
