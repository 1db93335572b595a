// The inside of one process set: `pkagent _ranks WORKSPACE`, run in the set's sandbox, starts the N
// rank workers (one Python process per rank, env:// rendezvous on 127.0.0.1 and a free port), kills
// them all as soon as one exits with an error (the others would wait in a collective forever), and
// writes WORKSPACE/ranks.json: how each rank ended and the tail of its output.
//
// It holds no authority: the judge drives the ranks over its own socket, keeps every deadline, and
// reads ranks.json (written where candidate code runs) only for the messages it shows.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/device_kind.h"

namespace pk::bench {

/// The hidden subcommand that runs supervise_ranks.
inline constexpr const char* ranks_subcommand = "_ranks";

/// WORKSPACE/launch.json, written by the judge (paths relative to the workspace).
struct launch_spec {
  std::string python;         ///< the interpreter with torch
  std::string worker;         ///< rank_worker.py
  std::string socket;         ///< the judge's socket, as the ranks see it
  int world = 2;
  device_kind device = default_device;
  int threads_per_rank = 1;   ///< OMP_NUM_THREADS on CPU
};
nlohmann::json to_json(const launch_spec& s);
launch_spec launch_spec_from_json(const nlohmann::json& j);

/// How one rank ended, as its supervisor saw it.
struct rank_exit {
  int rank = 0;
  int exit_code = -1;
  int signal = 0;
  bool killed = false;  ///< killed by the supervisor because another rank failed
  std::string stdout_text, stderr_text;
};

/// WORKSPACE/ranks.json.
struct ranks_report {
  std::vector<rank_exit> ranks;
};
nlohmann::json to_json(const ranks_report& r);
/// Throws nlohmann::json::exception when `j` is not a ranks report.
ranks_report ranks_report_from_json(const nlohmann::json& j);

/// Runs the ranks of the workspace's launch.json and writes ranks.json. Returns 0 when it could
/// supervise them (whatever they did), 2 when the workspace is unusable.
int supervise_ranks(const std::filesystem::path& workspace);

}  // namespace pk::bench
