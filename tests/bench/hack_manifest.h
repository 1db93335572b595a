// The red-team set (hacks/manifest.toml): every proof-of-concept hack candidate, how it is run
// through `pkagent eval`, and the outcome that counts as caught. Also the honest candidates
// (references, experts) that must stay `correct`: the no-false-positive side.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_kind.h"

namespace pk::bench::testing {

/// What the judge must make of a candidate.
enum class expectation {
  no_gain,    ///< any verdict but `correct`, or `correct` with speedup <= max_speedup
  rejected,   ///< any failure verdict (exit code 1)
  forbidden,  ///< the verdict `forbidden` (exit code 1)
  correct,    ///< honest work: `correct`, speedup within [min_speedup, max_speedup]
};

/// One evaluation of the set: a candidate file on one problem.
struct hack_entry {
  std::string name;                ///< test name: `name` or the file stem, and the problem: h01_constant_answer_p1
  std::filesystem::path file;      ///< absolute path of the candidate
  int family = 0;                  ///< hacks.md's family number; 0 for honest candidates
  std::string family_name;
  int problem = 0;
  std::string set;                 ///< quick (CI), full, gpu
  device_kind device = default_device;  ///< its `device`, else cuda in the gpu set and cpu in the others
  expectation expect = expectation::no_gain;
  double min_speedup = 0;
  double max_speedup = 0;
  int steps = 1;                   ///< evaluations of the same file and seed; the last one is judged
  std::vector<int> step_min_calls; ///< per step, --min-calls instead of min_calls (empty: min_calls)
  int world = 2;                   ///< on GPUs the host's GPU count where that is fewer, down to min_world
  int min_world = 1;               ///< the smallest world where the trick means something (a GPU host below skips)
  long long seed = 0;
  int trials = 1;
  int min_calls = 1;
  double timeout_s = 0;            ///< pkagent eval --timeout
  double compile_timeout_s = 0;    ///< pkagent eval --compile-timeout
  double wall_limit_s = 0;         ///< past this the judge is taken to hang
  std::vector<std::string> args;   ///< further `pkagent eval` arguments
};

/// Reads the manifest; entries with several problems become one entry per problem. Candidate
/// files are relative to the manifest's directory (`file`) or to the repository (`source`).
/// Throws config::config_error naming the key on any mistake.
std::vector<hack_entry> load_hack_manifest(const std::filesystem::path& manifest,
                                           const std::filesystem::path& source_root);

/// The world an entry runs at on a host with `gpus` visible GPUs: its `world` on CPU; on GPUs as many as the
/// host has, up to `world`; nullopt where that is below `min_world` (the test skips and says why).
std::optional<int> world_on_host(const hack_entry& e, int gpus);

/// What one `pkagent eval` of an entry gave.
struct hack_outcome {
  int exit_code = -1;
  bool hung = false;              ///< still running at the wall limit (killed)
  std::string verdict;            ///< empty without a JSON report
  std::string reason;             ///< a `forbidden` verdict's reason (multicast, tampering, background)
  std::optional<double> speedup;  ///< pooled speedup of a `correct` verdict with timing
  std::string message;            ///< the report's message, or the end of stderr
  double wall_s = 0;
};

struct judgement {
  bool caught = false;  ///< for honest entries: the judge got it right (no false positive)
  std::string why;
};

/// Applies the entry's expectation to an outcome. A hang, an internal error (exit 3) or bad input
/// (exit 2) never counts as caught: tampering must end in a verdict.
judgement judge_outcome(const hack_entry& e, const hack_outcome& o);

std::string to_string(expectation e);

}  // namespace pk::bench::testing
