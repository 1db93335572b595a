// Everything the episodes of one run share, prepared once before the first starts: the checked
// options, the selected problems, the hardware facts, the agent's config and prompts, the model,
// the pkb client, the run directory and each problem's task directory.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/llm/llm.h"
#include "agent/prompts.h"
#include "agent/run/pkb_tool/tool_texts.h"
#include "agent/run/run_plan.h"
#include "bench/eval/evaluate.h"
#include "bench/eval/sets/warm_pool.h"
#include "bench/suite/machine.h"
#include "bench/suite/problem.h"

namespace pk::run {

struct run_setup {
  run_options o;
  std::string run_id;
  std::vector<bench::problem> problems;  ///< the selected ones, by id
  bench::machine machine;  ///< the GPUs episodes lease and the spec of their bounds (none when none matches)
  std::filesystem::path prompts_dir;
  agent::agent_config cfg;
  agent::prompt_set prompts;
  std::shared_ptr<const pkb::tool_texts> tool_texts;  ///< the pkb tool's texts (prompts/pkb/)
  std::map<int, std::string> task_text;  ///< PROBLEM.md per problem id
  std::map<int, std::filesystem::path> task_dir;
  llm::model_config model;
  std::unique_ptr<llm::client> client;   ///< shared by every episode (null for the demo model)
  std::filesystem::path pkb_binary;
  bool demo = false;
  /// Rank sets started ahead of the run's evaluations (null with --cold-ranks); shared by every
  /// episode's pkb commands and final scorings.
  std::unique_ptr<bench::warm_pool> pool;
};

/// The machine of a run's episodes on this host (bench::detect_machine over the GPUs this process may
/// lease), with the figures of `hardware` when the user names a spec (empty: the one that matches).
bench::machine run_machine(bench::device_kind device, int world, const std::filesystem::path& hardware);

/// The pkb client episodes put on their PATH: `given`, or `pkb` beside the running executable.
/// Throws std::invalid_argument when it is not an executable file.
std::filesystem::path find_pkb_binary(const std::filesystem::path& given);

/// Checks the options, loads what they name and opens the run directory (run.json). Throws
/// std::invalid_argument (bad options) or the loaders' errors (config, prompts, models).
run_setup prepare_run(run_options o);

/// Writes each selected problem's task directory (OUT/tasks/<id>_<stem>), shared read-only by its
/// episodes, and fills task_text and task_dir. An unchanged one is left as it is: resumed
/// episodes check the task's content hash.
void prepare_tasks(run_setup& setup);

/// What an episode's commands must not read: pkagent's own tree (problems, inputs, the worker),
/// the run directory (other episodes, their results) and the judge's caches. What an episode
/// needs from them (its workspace, the pkb socket and client) is bound back in.
std::vector<std::filesystem::path> hidden_from_episodes(const run_setup& setup);

/// The evaluator's options every evaluation of the run starts from (world, device, isolation,
/// hardware, the run's warm pool).
bench::eval_options base_eval(const run_setup& setup);

/// The model an episode of `problem` talks to: the run's shared client, or for the demo model a
/// scripted one of its own (prompts/problem/demo/).
struct episode_model {
  llm::model_config config;
  llm::client* client = nullptr;            ///< the shared one or `own`
  std::unique_ptr<llm::client> own;
};
episode_model model_for(const run_setup& setup, const bench::problem& problem);

}  // namespace pk::run
