// One shard of a run, as a Slurm array task runs it (`pkagent run ... --shard I/N`): the episodes
// of the plan that fall to shard I (shard.h), run into the shard's own files, with its state
// recorded for `--status` and the merge.
#pragma once

#include "agent/run/runner.h"
#include "agent/run/scheduler/allocated_gpus.h"
#include "agent/run/slurm/shard.h"

namespace pk::run {

/// The Slurm array task this process is ("<array job>_<task>"), or "" outside an array.
std::string own_slurm_job();

/// Runs shard `s` of the run `o` describes. Refuses (std::invalid_argument) a shard count other
/// than the one the run was submitted with, and a shard that another live process is running.
/// Writes the shard's state: running, then finished (the runner returned; episodes that failed
/// have infrastructure-failure lines) or failed (it threw, with the message; rethrown).
run_summary run_shard(run_options o, shard_id s, scheduler::gpu_scheduler& gpus,
                      const scheduler::gpu_allocation& allocation);

}  // namespace pk::run
