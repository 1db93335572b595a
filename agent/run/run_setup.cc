#include "agent/run/run_setup.h"

#include <unistd.h>

#include <fmt/format.h>

#include "agent/model_choice.h"
#include "agent/prompt_template.h"
#include "agent/run/pkb_tool/commands.h"
#include "agent/run/problem_task.h"
#include "agent/run/scheduler/allocated_gpus.h"
#include "agent/scripted_client.h"
#include "bench/eval/reference_cache.h"
#include "bench/suite/suite.h"
#include "config/paths.h"
#include "sandbox/gpu_devices.h"

namespace pk::run {
namespace fs = std::filesystem;

namespace {

fs::path or_default(const fs::path& given, const char* data_relative) {
  return given.empty() ? config::data_path(data_relative) : given;
}

void check_counts(const run_options& o) {
  if (o.samples < 1) throw std::invalid_argument("--samples must be at least 1");
  if (o.jobs < 1) throw std::invalid_argument("--jobs must be at least 1");
}

std::vector<bench::problem> select_problems(const run_options& o) {
  const auto suite = bench::load_suite(o.suite.empty() ? bench::default_suite_dir() : o.suite);
  std::vector<bench::problem> selected;
  for (int id : o.problems) {
    const bench::problem& problem = bench::find_problem(suite, std::to_string(id));
    if (!problem.supports_world(o.world))
      throw std::invalid_argument(fmt::format("problem {} does not support world size {}; choose --world among "
                                              "its sizes or leave it out of --problems", problem.name(), o.world));
    selected.push_back(problem);
  }
  return selected;
}

void choose_run_model(run_setup& setup) {
  setup.demo = setup.o.model == "demo";
  if (setup.demo) {
    setup.model.name = "demo";
    return;
  }
  agent::chosen_model m = agent::choose_model(setup.o.model, or_default(setup.o.models, "config/models.toml"),
                                              setup.o.max_output_tokens);
  setup.model = m.config;
  setup.client = std::move(m.client);
}

}  // namespace

bench::machine run_machine(bench::device_kind device, int world, const fs::path& hardware) {
  std::vector<int> leasable;
  if (device == bench::device_kind::cuda) leasable = scheduler::allocated_gpus(sandbox::host_gpu_indices()).gpus;
  bench::machine m = bench::detect_machine(device, world, leasable);
  return hardware.empty() ? m : bench::with_spec(std::move(m), hardware);
}

fs::path find_pkb_binary(const fs::path& given) {
  const fs::path binary = given.empty() ? fs::read_symlink("/proc/self/exe").parent_path() / "pkb" : given;
  if (::access(binary.c_str(), X_OK) != 0)
    throw std::invalid_argument(fmt::format("the pkb tool {} is missing; build it (ninja pkb) or pass --pkb PATH",
                                            binary.string()));
  return binary;
}

run_setup prepare_run(run_options o) {
  check_counts(o);
  run_setup setup;
  setup.o = std::move(o);
  setup.problems = select_problems(setup.o);
  setup.machine = run_machine(setup.o.device, setup.o.world, setup.o.hardware);
  if (!setup.machine.spec && setup.o.device == bench::device_kind::cuda)
    fmt::print(stderr, "pkagent run: {} {} (--hardware FILE names a spec)\n", setup.machine.summary(),
               setup.machine.missing_spec());
  setup.prompts_dir = or_default(setup.o.prompts, "prompts");
  setup.cfg = agent::load_agent_config(or_default(setup.o.agent_config, "config/agent.toml"));
  agent::apply_overrides(setup.cfg, setup.o.overrides);
  if (!setup.o.gpu_seconds_cap && setup.cfg.limits.gpu_seconds > 0)
    setup.o.gpu_seconds_cap = setup.cfg.limits.gpu_seconds;
  setup.prompts = agent::prompt_set::load(setup.prompts_dir);
  setup.tool_texts =
      std::make_shared<const pkb::tool_texts>(pkb::tool_texts::load(setup.prompts_dir, pkb::command_names()));
  choose_run_model(setup);
  if (setup.o.mode == metrics::run_mode::agent) setup.pkb_binary = find_pkb_binary(setup.o.pkb_binary);
  if (setup.o.warm_ranks) setup.pool = std::make_unique<bench::warm_pool>();
  setup.run_id = open_run_dir(setup.o);
  return setup;
}

void prepare_tasks(run_setup& setup) {
  problem_view view;
  view.world = setup.o.world;
  view.device = setup.o.device;
  view.check_trials = setup.o.check_trials;
  view.final_trials = setup.o.final_trials;
  view.machine = setup.machine;
  view.kernels_runtime = kernels_runtime_available();
  for (const auto& problem : setup.problems) {
    const std::string text = render_problem(problem, view, setup.prompts_dir);
    const fs::path dir = setup.o.out / "tasks" / problem.name();
    update_task_dir(dir, problem, text, setup.prompts_dir);
    setup.task_text[problem.id] = text;
    setup.task_dir[problem.id] = fs::absolute(dir);
  }
}

std::vector<fs::path> hidden_from_episodes(const run_setup& setup) {
  return {config::home(), fs::absolute(setup.o.out), bench::reference_cache::default_root().parent_path()};
}

bench::eval_options base_eval(const run_setup& setup) {
  bench::eval_options e;
  e.world = setup.o.world;
  e.device = setup.o.device;
  e.isolation = setup.o.isolation;
  e.hardware = setup.machine.spec;
  e.no_hardware = setup.machine.missing_spec();
  e.pool = setup.pool.get();
  // Candidate code that pkb check/bench/profile or final scoring runs reads no more than the
  // episode's own shell: not the run's other episodes.
  e.hidden = hidden_from_episodes(setup);
  return e;
}

// The demo model plays prompts/problem/demo/: the agent script, or for zero-shot a reply
// holding the problem's own reference (a known-correct implementation).
episode_model model_for(const run_setup& setup, const bench::problem& problem) {
  episode_model m;
  if (!setup.demo) {
    m.config = setup.model;
    m.client = setup.client.get();
    return m;
  }
  const bool agent = setup.o.mode == metrics::run_mode::agent;
  const fs::path script = setup.prompts_dir / "problem" / "demo" / (agent ? "agent.md" : "zeroshot.md");
  if (agent) {
    m.own = std::make_unique<agent::scripted_client>(agent::scripted_client::from_file(script));
  } else {
    const auto tpl = agent::prompt_template::load(script, {"reference"});
    m.own = std::make_unique<agent::scripted_client>(
        std::vector<std::string>{tpl.render({{"reference", reference_text(problem)}})});
  }
  m.client = m.own.get();
  m.config.name = "demo";
  m.config.model = "scripted";
  m.config.base_url = "file://" + fs::absolute(script).string();
  return m;
}

}  // namespace pk::run
