// One episode of a run, from start to result: the agent loop with its pkb server (or the one
// zero-shot call), then final scoring and the result records in the episode's directory and in
// OUT/results.jsonl. A rerun resumes what a crash interrupted (see runner.h).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/run/final_score.h"
#include "agent/run/progress.h"
#include "agent/run/run_setup.h"
#include "agent/run/scheduler/gpu_scheduler.h"

namespace pk::run {

/// Called with each agent-loop event of an episode, named "<id>_<stem>/sample-<k>".
using event_observer = std::function<void(const std::string& episode, const nlohmann::json& event)>;

class episode_driver {
 public:
  episode_driver(const run_setup& setup, scheduler::gpu_scheduler& gpus, progress& prog, event_observer on_event);

  /// Runs (or resumes, or only scores) sample `sample` of `problem`; returns its result. Throws for
  /// what keeps the episode from being run or scored.
  metrics::episode_result run(const bench::problem& problem, int sample);

 private:
  /// The agent loop with the episode's pkb server, started, resumed, or (a finished transcript)
  /// only read back.
  void play_agent(const bench::problem& problem, const std::filesystem::path& ep, const std::string& name,
                  scheduler::holder who, episode_facts& facts);
  /// The one zero-shot completion (re-read when an earlier invocation got it).
  void play_zeroshot(const bench::problem& problem, const std::filesystem::path& ep, const std::string& name,
                     episode_facts& facts);
  /// Final scoring under a holder of its own, and the result records. Returns the result.
  metrics::episode_result score(const bench::problem& problem, const std::filesystem::path& ep,
                                const std::string& name, scheduler::holder who, episode_facts& facts);

  const run_setup& setup_;
  scheduler::gpu_scheduler& gpus_;
  progress& prog_;
  event_observer on_event_;
};

}  // namespace pk::run
