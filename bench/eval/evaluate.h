// One evaluation of a candidate against a problem: reference outputs (from the cache, or one
// reference run that fills it), one candidate run (all trials, then timing, in one start of the
// ranks), and the verdict.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/eval/hardware_spec.h"
#include "bench/eval/problem.h"
#include "bench/eval/report.h"
#include "sandbox/sandbox.h"

namespace pk::bench {

/// Timing knobs (defaults per issue 5: >= 20 warm-up calls and 100 ms, >= 50 timed calls).
/// min_ms is small on purpose: a trial's self-vs-self spread (about +-1.5% on H200) does not come from the
/// number of calls (the median of 800 calls of problem 1 is known to 0.2%), and 100 ms per function cost
/// 5 s of a 5-trial evaluation, because the host needs ~160 us to enqueue one barrier-aligned call.
struct timing_options {
  int warmup_min_calls = 20;
  double warmup_min_ms = 100;
  double warmup_max_ms = 3000;
  int min_calls = 100;
  double min_ms = 30;
  int max_calls = 2000;
  bool cuda_graph = false;
};

struct eval_options {
  int world = 2;
  int trials = 5;
  bool perf = true;
  std::string device = "cuda";  ///< "cuda" (NCCL) or "cpu" (gloo)
  long long seed = 42;          ///< base seed; final scoring uses one the agent never saw
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  double timeout_s = 120;          ///< per phase (init, each trial, each timing)
  double compile_timeout_s = 600;  ///< start-up, imports and JIT compilation
  std::vector<int> gpus;           ///< host GPU indices; empty = 0 .. world-1
  timing_options timing;
  std::filesystem::path cache_root;  ///< empty = reference_cache::default_root()
  std::optional<hardware_spec> hardware;  ///< for the roofline line
  bool keep_workspace = false;
  std::function<void(const std::string&)> progress;  ///< progress lines (stderr in the CLI)
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

/// Where the judge remembers binaries its multicast scan found clean (by content), for this
/// evaluation's cache; out of every sandbox's reach. Shared with `pkb run`'s pre-run scan.
std::filesystem::path multicast_clean_cache(const eval_options& o);

/// GPUs this process can use: /proc/driver/nvidia/gpus entries, narrowed by CUDA_VISIBLE_DEVICES.
int visible_gpu_count();

}  // namespace pk::bench
