// What `pkagent run` is asked to do: the options, the problem list, and the run directory's plan
// file (run.json), which a rerun on the same directory must agree with to resume it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/device_kind.h"
#include "bench/metrics/result.h"
#include "bench/suite/problem.h"
#include "sandbox/sandbox.h"

namespace pk::run {

/// A part of the plan that one invocation runs into files of its own, while other parts run at the
/// same time on other hosts sharing the run directory (a shard of a Slurm array: shard.h).
struct run_part {
  std::function<bool(int problem_id, int sample)> includes;  ///< the episodes this part runs
  std::filesystem::path results;  ///< its results file (a whole run's is OUT/results.jsonl)
  std::filesystem::path leases;   ///< its lease log (a whole run's is OUT/leases.jsonl)
};

struct run_options {
  metrics::run_mode mode = metrics::run_mode::agent;
  std::string model = "demo";
  int samples = 1;
  std::vector<int> problems;           ///< problem ids, ascending
  int jobs = 1;                        ///< concurrent episodes
  bench::device_kind device = bench::default_device;  ///< `pkagent run` picks it from --device and the host
  std::filesystem::path out;           ///< the run directory
  int world = 2;
  std::vector<std::string> overrides;  ///< agent.toml overrides (--set)
  std::filesystem::path agent_config;  ///< empty: config/agent.toml
  std::filesystem::path prompts;       ///< empty: prompts/
  std::filesystem::path models;        ///< empty: config/models.toml
  std::filesystem::path hardware;      ///< empty: the spec matching the leased GPUs (bench/suite/machine.h)
  std::filesystem::path suite;         ///< empty: bench/problems
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  int check_trials = 2;                ///< `pkb check`
  int final_trials = 5;                ///< final scoring
  bool final_perf = true;              ///< time the solution at final scoring
  std::optional<double> gpu_seconds_cap;  ///< per episode, for pkb commands; unset: agent.toml's
  std::optional<std::int64_t> max_output_tokens;  ///< per model reply; unset: the model's default
  std::filesystem::path pkb_binary;    ///< empty: `pkb` beside the running executable
  bool quiet = false;
  bool warm_ranks = true;              ///< evaluations take rank sets started ahead (bench/eval/sets/warm_pool.h)
  std::string progress = "text";       ///< text (a live line on a terminal, else log lines) or json
  std::optional<double> max_dollars;   ///< model spend of the whole run, all parts together (run_ledger.h)
  std::optional<run_part> part;        ///< unset: the whole plan, into the run's own files
};

/// Where an invocation records results and leases: the run's own files, or its part's.
std::filesystem::path results_file(const run_options& o);
std::filesystem::path leases_file(const run_options& o);

/// Parses "1-8,13", "4" or "all" against the suite's ids. Throws std::invalid_argument naming
/// the bad part and the known ids.
std::vector<int> parse_problem_list(std::string_view spec, const std::vector<bench::problem>& suite);

/// The plan as stored in run.json (mode, model, device, world, run id; samples and problems are
/// allowed to grow on a rerun).
nlohmann::json plan_json(const run_options& o, const std::string& run_id);

/// Reads out/run.json when present and checks that `o` may continue it; returns its run id, or a
/// new one (the directory's name and the UTC start time) after writing run.json. Throws
/// std::invalid_argument when the directory holds a different run, saying which option differs.
std::string open_run_dir(const run_options& o);

/// out/episodes/<id>_<stem>/sample-<k>
std::filesystem::path episode_dir(const std::filesystem::path& out, const bench::problem& p, int sample);

}  // namespace pk::run
