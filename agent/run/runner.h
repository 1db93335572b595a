// The episode runner: every (problem, sample) of a run as an agent episode or a zero-shot
// completion, `jobs` at a time, each scored at its end and recorded in the run directory:
//
//   OUT/run.json                                   the plan (a rerun must agree with it)
//   OUT/tasks/<id>_<stem>/                         PROBLEM.md, reference.py, solution.py stub, ...
//   OUT/episodes/<id>_<stem>/sample-<k>/           transcript.jsonl, workspace/, pkb.jsonl,
//                                                  final_eval.json, result.json
//   OUT/results.jsonl                              one line per scored episode (docs/results.md)
//   OUT/leases.jsonl                               one line per GPU lease: holder, gpus, start, end
//
// A rerun on the same OUT skips scored episodes, scores ended-but-unscored ones, and resumes
// unfinished agent episodes through the agent loop's resume (recorded replies replayed).
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/run/run_plan.h"
#include "agent/run/scheduler/gpu_scheduler.h"

namespace pk::run {

struct run_summary {
  int episodes = 0;      ///< in the plan
  int skipped = 0;       ///< scored by an earlier invocation
  int finished = 0;      ///< scored now
  int correct = 0;       ///< of all scored episodes
  int failed = 0;        ///< episodes that could not be run or scored (tool or config errors)
  int unstarted = 0;     ///< not started: the run's dollar limit (max_dollars) was reached
  /// Why each episode ended (submitted, step_limit ...; harness_error for those that failed to run),
  /// earlier invocations' included.
  std::map<std::string, int> end_reasons;
};

class runner {
 public:
  /// `gpus` leases GPUs (or, with --device cpu, CPU evaluation slots) to pkb commands and scoring.
  runner(run_options o, scheduler::gpu_scheduler& gpus);

  /// Runs the plan; never throws for an episode's failure (it is counted and reported), only
  /// for bad options or an unusable run directory.
  run_summary run();

  /// Called with each agent-loop event of each episode (tests, progress); may be empty.
  std::function<void(const std::string& episode, const nlohmann::json& event)> on_event;

 private:
  run_options o_;
  scheduler::gpu_scheduler& gpus_;
};

}  // namespace pk::run
