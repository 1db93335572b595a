#include "agent/run/cli.h"

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "agent/llm/llm.h"
#include "agent/run/runner.h"
#include "bench/eval/evaluate.h"
#include "agent/run/scheduler/host_gpus.h"
#include "config/toml_reader.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

struct run_args {
  std::string mode = "agent", model = "demo", problems = "1-4", device, out, sandbox = "bwrap";
  std::string config, prompts, models, hardware, suite, pkb;
  std::vector<std::string> overrides;
  int samples = 1, jobs = 1, world = 2, trials = 5, check_trials = 2, cpu_slots = 0;
  std::optional<double> gpu_seconds;
  std::optional<std::int64_t> max_output_tokens;
  bool no_perf = false, quiet = false;
};

int run_command(const run_args& a) {
  run_options o;
  o.mode = a.mode == "zeroshot" ? metrics::run_mode::zeroshot : metrics::run_mode::agent;
  o.model = a.model;
  o.samples = a.samples;
  o.jobs = a.jobs;
  o.world = a.world;
  o.out = a.out;
  o.overrides = a.overrides;
  o.agent_config = a.config;
  o.prompts = a.prompts;
  o.models = a.models;
  o.hardware = a.hardware;
  o.suite = a.suite;
  o.pkb_binary = a.pkb;
  o.final_trials = a.trials;
  o.check_trials = a.check_trials;
  o.final_perf = !a.no_perf;
  o.gpu_seconds_cap = a.gpu_seconds;
  o.max_output_tokens = a.max_output_tokens;
  o.quiet = a.quiet;
  o.isolation = a.sandbox == "none" ? sandbox::isolation::none : sandbox::isolation::bwrap;
  if (o.isolation == sandbox::isolation::none)
    fmt::print(stderr, "pkagent run: warning: --sandbox none: model commands and candidates run unisolated\n");
  o.problems = parse_problem_list(a.problems, bench::load_suite(a.suite.empty() ? bench::default_suite_dir()
                                                                                  : fs::path(a.suite)));
  const std::vector<int> host_gpus = scheduler::detect_host_gpus();
  o.device = a.device;
  if (o.device.empty()) {
    o.device = host_gpus.empty() ? "cpu" : "cuda";
    if (host_gpus.empty())
      fmt::print(stderr, "pkagent run: no NVIDIA GPU on this host: running on CPU with gloo (--device cpu)\n");
  }
  if (o.device == "cuda" && host_gpus.empty())
    throw std::invalid_argument("--device cuda: this host has no NVIDIA GPU (/dev/nvidia*); use --device cpu");

  // On CPU, "GPUs" are evaluation slots: one world's worth per 4 cores keeps gloo ranks from
  // starving each other (and timing from meaning nothing). --cpu-slots simulates a host of that
  // many GPUs instead (e.g. 8, to run world-2 leases side by side as on an 8-GPU node).
  if (a.cpu_slots > 0 && o.device != "cpu")
    throw std::invalid_argument("--cpu-slots applies to --device cpu only; with cuda the host's GPUs are leased");
  const int cpu_worlds = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 4);
  std::vector<int> slots = host_gpus;
  if (o.device == "cpu") {
    slots.clear();
    const int n = a.cpu_slots > 0 ? a.cpu_slots : o.world * cpu_worlds;
    if (n < o.world)
      throw std::invalid_argument(fmt::format("--cpu-slots {} is fewer than --world {}: no evaluation could run",
                                              n, o.world));
    for (int i = 0; i < n; ++i) slots.push_back(i);  // as gpu_scheduler::simulated
  }
  auto gpus = std::make_unique<scheduler::gpu_scheduler>(slots);
  if (o.device == "cuda" && static_cast<int>(host_gpus.size()) < o.world)
    throw std::invalid_argument(fmt::format("--world {}: this host has only {} GPU(s)", o.world, host_gpus.size()));

  runner r(o, *gpus);
  const run_summary s = r.run();
  fmt::print("{}: {} episodes, {} scored now, {} scored before, {} correct, {} failed to run\n", o.out.string(),
             s.episodes, s.finished, s.skipped, s.correct, s.failed);
  fmt::print("report: pkagent report {}\n", o.out.string());
  return s.failed > 0 ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<run_args>();
  CLI::App* c = app.add_subcommand("run", "Run agent or zero-shot episodes over benchmark problems, score each on "
                                          "hidden inputs, and record them for `pkagent report`");
  c->footer("A rerun on the same --out resumes: scored episodes are skipped, unfinished ones resumed.\n"
            "Example: pkagent run --model demo --problems 1-4 --out runs/demo && pkagent report runs/demo");
  c->add_option("--mode", a->mode, "agent (multi-turn, with the pkb tool) or zeroshot (one completion)")
      ->capture_default_str()->check(CLI::IsMember({"agent", "zeroshot"}));
  c->add_option("--model", a->model, "Model name from config/models.toml, or demo (scripted, no key)")
      ->capture_default_str();
  c->add_option("--samples", a->samples, "Episodes per problem")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--problems", a->problems, "Problem ids, e.g. 1-8,13, or all")->capture_default_str();
  c->add_option("--jobs", a->jobs, "Concurrent episodes")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--device", a->device, "cuda (NCCL) or cpu (gloo); default cuda when GPUs are present")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  c->add_option("--out", a->out, "Run directory (created; an existing one is resumed)")->required();
  c->add_option("--world", a->world, "Ranks per evaluation")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--trials", a->trials, "Trials of the final scoring (hidden seeds)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--check-trials", a->check_trials, "Trials of `pkb check` (visible seeds)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--cpu-slots", a->cpu_slots, "With --device cpu: simulated GPUs the scheduler leases (default: "
                                             "world x cores/4)")->check(CLI::PositiveNumber);
  c->add_flag("--no-perf", a->no_perf, "Final scoring checks correctness only (no timing, no speedup)");
  c->add_option("--gpu-seconds", a->gpu_seconds, "GPU-second cap per episode for pkb commands (default: "
                                                 "agent.toml limits.gpu_seconds; 0 there = none)");
  c->add_option("--max-output-tokens", a->max_output_tokens, "Output tokens per model reply (default: the "
                 "model's; openai-compatible: " + std::to_string(llm::compatible_max_output_tokens) + ")")
      ->check(CLI::PositiveNumber);
  c->add_option("--set", a->overrides, "Override an agent setting, e.g. --set limits.steps=20");
  c->add_option("--config", a->config, "Agent settings (default: config/agent.toml)");
  c->add_option("--prompts", a->prompts, "Prompt templates directory (default: prompts/)");
  c->add_option("--models", a->models, "Model table (default: config/models.toml)");
  c->add_option("--hardware", a->hardware, "Hardware spec shown to the model (default: config/hardware/h200x2.toml)");
  c->add_option("--suite-dir", a->suite, "Problems directory (default: bench/problems)");
  c->add_option("--pkb", a->pkb, "The pkb client binary (default: beside pkagent)");
  c->add_option("--sandbox", a->sandbox, "bwrap (default) or none (debugging only)")->capture_default_str()
      ->check(CLI::IsMember({"bwrap", "none"}));
  c->add_flag("-q,--quiet", a->quiet, "No progress output");
  c->callback([a, &exit_code] {
    try {
      exit_code = run_command(*a);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "pkagent run: {}\n", e.what());
      exit_code = 2;
    } catch (const config::config_error& e) {
      fmt::print(stderr, "pkagent run: {}\n", e.what());
      exit_code = 2;
    } catch (const llm::llm_error& e) {
      fmt::print(stderr, "pkagent run: {}\n", e.what());
      exit_code = 2;
    }
  });
}

}  // namespace pk::run
