// The inside of one evaluation run: starts the N rank workers of a plan (one Python process per
// rank, env:// rendezvous on 127.0.0.1 and a free port), watches their phases, and kills them all
// as soon as one fails or overstays its phase. Runs as `pkagent _ranks WORKSPACE`, inside the same
// sandbox as the ranks (ranks in different sandboxes cannot share CUDA IPC or NCCL's bootstrap),
// and writes WORKSPACE/ranks.json for the judge outside.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace pk::bench {

/// WORKSPACE/launch.json, written by the launcher (paths relative to the workspace).
struct launch_spec {
  std::string python;          ///< the interpreter with torch
  std::string worker;          ///< rank_worker.py
  std::string plan;            ///< plan.json given to every rank
  std::string out_dir;         ///< where ranks write rank<r>/phase, result.json ...
  int world = 2;
  std::string device = "cuda";
  double import_timeout_s = 600;  ///< start-up, imports and JIT compilation
  double phase_timeout_s = 120;   ///< every later phase (init, each trial, each timing)
  int threads_per_rank = 1;       ///< OMP_NUM_THREADS on CPU
};

nlohmann::json to_json(const launch_spec& s);
launch_spec launch_spec_from_json(const nlohmann::json& j);

/// Runs the ranks of the workspace's launch.json and writes ranks.json. Returns 0 when it could
/// supervise them (whatever they did), 2 when the workspace is unusable.
int supervise_ranks(const std::filesystem::path& workspace);

}  // namespace pk::bench
