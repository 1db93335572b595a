#include "agent/run/cli.h"

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "agent/cli.h"
#include "agent/limits.h"
#include "agent/run/runner.h"
#include "agent/run/scheduler/allocated_gpus.h"
#include "agent/run/slurm/merge.h"
#include "agent/run/slurm/run_status.h"
#include "agent/run/slurm/shard_run.h"
#include "agent/run/slurm/slurm_submit.h"
#include "bench/device_option.h"
#include "bench/eval/evaluate.h"
#include "bench/metrics/result.h"
#include "bench/report/format.h"
#include "bench/suite/suite.h"
#include "sandbox/gpu_devices.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

// The flags bound straight into run_options, plus the two that only the command line has.
struct run_args {
  run_options o;
  std::string problems = "1-4";
  std::optional<bench::device_kind> device;  // unset: cuda where the host has GPUs, else cpu
  int cpu_slots = 0;  // 0: world x cores/4
  // Scale-out (docs/slurm.md): a shard, a Slurm submission, a sharded run's status and merge.
  std::string shard, status, merge;
  bool slurm = false;
  std::optional<int> shards;
  std::vector<std::string> slurm_opts, slurm_merge_opts;
};

int run_command(run_args& a) {
  run_options& o = a.o;
  if (!a.status.empty()) {
    fmt::print("{}", format_status(read_status(a.status, a.shards), a.status));
    return 0;
  }
  if (!a.merge.empty()) return merge_command(a.merge, o.suite);
  if (o.out.empty()) throw std::invalid_argument("--out is required: the run directory");
  if (a.slurm && !a.shard.empty()) throw std::invalid_argument("--slurm submits every shard: leave out --shard");
  if (o.isolation == sandbox::isolation::none)
    fmt::print(stderr, "pkagent run: warning: --sandbox none: model commands and candidates run unisolated\n");
  o.problems = parse_problem_list(a.problems, bench::load_suite(o.suite.empty() ? bench::default_suite_dir() : o.suite));
  if (a.slurm) {
    // The tasks run on GPU nodes, not here: cuda unless told otherwise, and said to every task.
    o.device = a.device.value_or(bench::device_kind::cuda);
    slurm_request req{a.shards, a.slurm_opts, a.slurm_merge_opts, shard_arguments(own_run_arguments())};
    if (!a.device) req.run_arguments.insert(req.run_arguments.end(), {"--device", to_string(o.device)});
    return submit_to_slurm(o, req);
  }
  if (a.shard.empty() && read_slurm_record(o.out))
    throw std::invalid_argument(fmt::format("{} is a run submitted to Slurm: resume it with the same --slurm "
                                            "command, or run one shard with --shard I/N", o.out.string()));
  const std::vector<int> host_gpus = sandbox::host_gpu_indices();
  o.device = a.device.value_or(host_gpus.empty() ? bench::device_kind::cpu : bench::device_kind::cuda);
  if (!a.device && host_gpus.empty())
    fmt::print(stderr, "pkagent run: no NVIDIA GPU on this host: running on CPU with gloo (--device cpu)\n");
  if (o.device == bench::device_kind::cuda && host_gpus.empty())
    throw std::invalid_argument("--device cuda: this host has no NVIDIA GPU (/dev/nvidia*); use --device cpu");

  // On CPU, "GPUs" are evaluation slots: one world's worth per 4 cores keeps gloo ranks from
  // starving each other (and timing from meaning nothing). --cpu-slots simulates a host of that
  // many GPUs instead (e.g. 8, to run world-2 leases side by side as on an 8-GPU node).
  if (a.cpu_slots > 0 && o.device != bench::device_kind::cpu)
    throw std::invalid_argument("--cpu-slots applies to --device cpu only; with cuda the host's GPUs are leased");
  const int cpu_worlds = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 4);
  // Within what Slurm (or CUDA_VISIBLE_DEVICES) gave this process.
  const scheduler::gpu_allocation allocation =
      o.device == bench::device_kind::cuda ? scheduler::allocated_gpus(host_gpus) : scheduler::gpu_allocation{};
  std::vector<int> slots = allocation.gpus;
  if (o.device == bench::device_kind::cpu) {
    slots.clear();
    const int n = a.cpu_slots > 0 ? a.cpu_slots : o.world * cpu_worlds;
    if (n < o.world)
      throw std::invalid_argument(fmt::format("--cpu-slots {} is fewer than --world {}: no evaluation could run",
                                              n, o.world));
    for (int i = 0; i < n; ++i) slots.push_back(i);  // as gpu_scheduler::simulated
  }
  auto gpus = std::make_unique<scheduler::gpu_scheduler>(slots);
  if (o.device == bench::device_kind::cuda && static_cast<int>(allocation.gpus.size()) < o.world)
    throw std::invalid_argument(fmt::format("--world {}: this process may use only {} GPU(s) ({})", o.world,
                                            allocation.gpus.size(), allocation.source));

  run_summary s;
  if (!a.shard.empty()) {
    s = run_shard(o, parse_shard(a.shard), *gpus, allocation);
  } else {
    runner r(o, *gpus);
    s = r.run();
  }
  fmt::print("{}: {} episodes, {} scored now, {} scored before, {} correct, {} failed to run; ended: {}\n",
             o.out.string(), s.episodes, s.finished, s.skipped, s.correct, s.failed, report::counts(s.end_reasons));
  if (s.unstarted > 0)
    fmt::print("{} episode(s) not started: the run's --max-dollars is spent\n", s.unstarted);
  fmt::print("report: pkagent report {}\n", o.out.string());
  const auto model_errors = s.end_reasons.find(std::string(agent::to_string(agent::end_reason::model_error)));
  if (s.finished > 0 && model_errors != s.end_reasons.end() && model_errors->second == s.finished) {
    // Nothing was learned about any problem: a script that goes on to `pkagent report` must know.
    fmt::print(stderr,
               "pkagent run: every episode scored now ended in model_error: the model provider failed (each "
               "transcript's last event says how); fix the model's entry or key, then run again into a new "
               "--out (resuming this one keeps these results)\n");
    return 3;
  }
  return s.failed > 0 ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<run_args>();
  run_options& o = a->o;
  CLI::App* c = app.add_subcommand("run", "Run agent or zero-shot episodes over benchmark problems, score each on "
                                          "hidden inputs, and record them for `pkagent report`");
  c->footer("A rerun on the same --out resumes: scored episodes are skipped, unfinished ones resumed.\n"
            "Example: pkagent run --model demo --problems 1-4 --out runs/demo && pkagent report runs/demo");
  c->add_option_function<std::string>(
       "--mode", [&o](const std::string& m) { o.mode = *metrics::parse_mode(m); },
       "agent (multi-turn, with the pkb tool) or zeroshot (one completion)")
      ->default_str(std::string(metrics::to_string(o.mode)))
      ->check([](const std::string& m) { return metrics::parse_mode(m) ? "" : "use agent or zeroshot"; });
  agent::add_model_option(*c, o.model, "The model of every episode")->capture_default_str();
  c->add_option("--samples", o.samples, "Episodes per problem")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--problems", a->problems, "Problem ids, e.g. 1-8,13, or all")->capture_default_str();
  c->add_option("--jobs", o.jobs, "Concurrent episodes")->capture_default_str()->check(CLI::PositiveNumber);
  bench::add_device_option(*c, a->device, "cuda (NCCL) or cpu (gloo); default cuda when GPUs are present");
  c->add_option("--out", o.out, "Run directory (created; an existing one is resumed); required");
  c->add_option("--world", o.world, "Ranks per evaluation")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--trials", o.final_trials, "Trials of the final scoring (hidden seeds)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--check-trials", o.check_trials, "Trials of `pkb check` (visible seeds)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--cpu-slots", a->cpu_slots, "With --device cpu: simulated GPUs the scheduler leases (default: "
                                             "world x cores/4)")->check(CLI::PositiveNumber);
  c->add_flag_callback("--no-perf", [&o] { o.final_perf = false; },
                       "Final scoring checks correctness only (no timing, no speedup)");
  c->add_option("--gpu-seconds", o.gpu_seconds_cap, "GPU-second cap per episode for pkb commands (default: "
                                                    "agent.toml limits.gpu_seconds; 0 there = none)");
  agent::add_shared_options(*c, {o.agent_config, o.overrides, o.prompts, o.models, o.isolation, o.quiet});
  agent::add_max_output_tokens_option(*c, o.max_output_tokens);
  c->add_option("--progress", o.progress, "text: a line per step and per episode and the run's status (one line "
                                          "redrawn on a terminal); json: the same as one JSON object per line, "
                                          "for programs; -q shows none")
      ->capture_default_str()->check(CLI::IsMember({"text", "json"}));
  c->add_option("--hardware", o.hardware,
                "Hardware spec of the bounds shown to the model (default: the one of config/hardware whose GPU model "
                "and count match the GPUs leased; none matching: no bound)");
  c->add_option("--suite-dir", o.suite, "Problems directory (default: bench/problems)");
  c->add_flag_callback("--cold-ranks", [&o] { o.warm_ranks = false; },
                       "Start every evaluation's ranks when it begins, instead of taking ranks that have "
                       "already imported torch (slower; for measuring start-up)");
  c->add_option("--pkb", o.pkb_binary, "The pkb client binary (default: beside pkagent)");
  c->add_option("--max-dollars", o.max_dollars, "Model spend of the whole run, all shards together: no episode "
                                                 "starts once it is reached")->check(CLI::NonNegativeNumber);
  // Scale-out over a cluster (docs/slurm.md).
  c->add_flag("--slurm", a->slurm, "Submit the run to Slurm as an array of --shards tasks and a merge job, then "
                                   "return; rerun to resubmit only shards with missing episodes");
  c->add_option("--shards", a->shards, "With --slurm: array tasks (default: one per problem, or as submitted "
                                       "before); with --status/--merge: the shard count to read")
      ->check(CLI::PositiveNumber);
  c->add_option("--slurm-opt", a->slurm_opts, "With --slurm: an sbatch option for the shard tasks, in the = form, "
                                              "e.g. --slurm-opt=--gres=gpu:8 --slurm-opt=--partition=gpu");
  c->add_option("--slurm-merge-opt", a->slurm_merge_opts, "With --slurm: an sbatch option for the merge job "
                                                          "(default: the partition, account and QoS of --slurm-opt)");
  c->add_option("--shard", a->shard, "Run only shard I/N of the plan into OUT/shards/I-of-N (what each array task "
                                     "runs)");
  c->add_option("--status", a->status, "Show RUN_DIR's episodes and shards (done, pending, running, failed) and "
                                       "exit");
  c->add_option("--merge", a->merge, "Merge RUN_DIR's shards into RUN_DIR/results.jsonl and report.md, and exit");
  c->callback([a, &exit_code] { exit_code = run_command(*a); });
}

}  // namespace pk::run
