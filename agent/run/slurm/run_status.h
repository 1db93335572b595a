// Where a sharded run stands: per shard done / pending / running / failed, its episodes scored and
// missing, and the spend so far; from the run directory's files and, when the run was submitted
// to Slurm, from squeue and scontrol. `pkagent run --status`, the resubmission (which shards to
// submit again) and the merge (which missing episodes are lost) all read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/run/run_ledger.h"
#include "agent/run/slurm/shard.h"
#include "agent/run/slurm/slurm.h"

namespace pk::run {

enum class shard_phase {
  unsubmitted,  ///< never started (nor submitted): its episodes are missing
  pending,      ///< queued in Slurm
  running,
  done,         ///< every episode it holds is scored
  failed,       ///< ended with episodes missing: cancelled, time limit, node lost, failed at start, errors
};
std::string_view to_string(shard_phase p);
/// A job Slurm still holds, as a phase: pending or running; nullopt for a state past running
/// (COMPLETING: its processes are gone).
std::optional<shard_phase> live_phase(const std::string& slurm_state);

struct shard_status {
  shard_id id;
  shard_phase phase = shard_phase::unsubmitted;
  int episodes = 0;        ///< of the plan, in this shard
  int scored = 0;          ///< with a result (infrastructure failures not counted)
  int infrastructure = 0;  ///< recorded as infrastructure failures, to be retried
  int harness_errors = 0;  ///< of those, the ones the shard itself recorded (pkagent raised)
  std::string job;         ///< "<array>_<task>", empty outside Slurm
  std::string host;
  std::string note;        ///< what ended it, where to look
  bool lost = false;       ///< ended before finishing: its episodes without a result are lost
  bool has_missing() const { return scored < episodes; }
};

struct run_status {
  stored_plan plan;
  int shard_count = 0;  ///< 0: not sharded
  std::vector<shard_status> shards;
  int episodes = 0, scored = 0, correct = 0, infrastructure = 0;
  model_spend spend;     ///< of the scored episodes
  double gpu_seconds = 0;
  std::string merge_job, merge_state;  ///< the latest merge job and what Slurm says of it
  bool slurm_unreachable = false;      ///< the run was submitted but squeue cannot run here
};

/// Reads the run in `out`. `shard_count` overrides the count found (Slurm record, else the shard
/// directories present). Throws std::invalid_argument when out holds no run or the shard
/// directories disagree on N.
run_status read_status(const std::filesystem::path& out, std::optional<int> shard_count = std::nullopt);

/// The status as a table for a terminal, with what to do next.
std::string format_status(const run_status& s, const std::filesystem::path& out);

}  // namespace pk::run
