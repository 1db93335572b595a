// `pkagent run ... --slurm`: the run as one Slurm array (task I runs `pkagent run ... --shard I/N`)
// and one merge job after it (--dependency=afterany), submitted from a login node. Resubmitting
// the same command submits only the shards with episodes missing that are not queued or running.
//
//   OUT/slurm/shard.sh, merge.sh     the job scripts (rewritten at each submission)
//   OUT/slurm/slurm.json             the shard count and every submission's job ids (slurm.h)
//   OUT/slurm/logs/shard-<I>.<array job>.out, merge.<job>.out
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/run/run_plan.h"

namespace pk::run {

struct slurm_request {
  std::optional<int> shards;               ///< unset: the count of an earlier submission, else one per problem
  std::vector<std::string> shard_options;  ///< sbatch options of the array (--slurm-opt)
  std::vector<std::string> merge_options;  ///< of the merge job; unset: the placement options of shard_options
  std::vector<std::string> run_arguments;  ///< what each task passes to `pkagent run`, before --shard I/N
};

/// The placement options (partition, account, QoS, reservation, cluster) among `shard_options`,
/// which the merge job needs too; resource options (GPUs, time, exclusive) stay with the shards.
std::vector<std::string> placement_options(const std::vector<std::string>& shard_options);

/// `pkagent run` arguments (after "run") without the submission's own flags (--slurm, --shards,
/// --slurm-opt, --slurm-merge-opt), as each shard task gets them.
std::vector<std::string> shard_arguments(const std::vector<std::string>& run_arguments);

/// The arguments after "run" this process was started with (/proc/self/cmdline).
std::vector<std::string> own_run_arguments();

/// Prepares the run directory (plan, task directories; so bad options fail here, not in the queue),
/// submits the shards that have missing episodes and are not queued or running, and a merge job
/// after them; prints the job ids and how to follow. With nothing to submit and nothing running,
/// merges at once. Returns the exit code.
int submit_to_slurm(const run_options& o, const slurm_request& request);

}  // namespace pk::run
