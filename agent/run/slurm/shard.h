// Shards of a run: a fixed part of the plan's episodes that one process (a Slurm array task, or a
// host started by hand) runs into files of its own, beside the other shards on a filesystem they
// all see:
//
//   OUT/shards/<i>-of-<N>/results.jsonl   the shard's result lines (docs/results.md)
//   OUT/shards/<i>-of-<N>/leases.jsonl    its GPU leases
//   OUT/shards/<i>-of-<N>/state.json      running / finished / failed, where, which GPUs
//
// Episode directories (OUT/episodes/...) belong to the episode's shard; OUT/run.json and the task
// directories are written whole by whichever shard comes first. The merge (merge.h) turns the
// shards' files into OUT/results.jsonl.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/run/run_plan.h"
#include "bench/device_kind.h"

namespace pk::run {

/// Shard `index` of `count` (0-based).
struct shard_id {
  int index = 0;
  int count = 1;
  std::string text() const;  ///< "2/4", as --shard takes it
  std::string name() const;  ///< "2-of-4", its directory's name
  bool operator==(const shard_id&) const = default;
};

/// Parses "I/N" with 0 <= I < N. Throws std::invalid_argument saying what is wrong.
shard_id parse_shard(std::string_view text);

struct episode_ref {
  int problem_id = 0;
  int sample = 0;
  bool operator==(const episode_ref&) const = default;
  auto operator<=>(const episode_ref&) const = default;
};

/// What OUT/run.json holds (run_plan.h writes it).
struct stored_plan {
  std::string run_id, mode, model;
  bench::device_kind device = bench::default_device;
  int world = 2;
  int samples = 1;
  std::vector<int> problems;  ///< ascending
};

/// Reads OUT/run.json. Throws std::invalid_argument naming the file when it is missing or not a plan.
stored_plan read_plan(const std::filesystem::path& out);

/// The plan's episodes in the order a run starts them: every problem's sample 0, then sample 1 ...
std::vector<episode_ref> plan_episodes(const stored_plan& plan);

/// The shard of the episode at `position` of plan_episodes, round robin: shards differ by at most
/// one episode, and more samples append episodes without moving earlier ones. With one shard per
/// problem, a shard holds every sample of one problem (its reference outputs are computed once).
int shard_of(std::size_t position, int count);

/// The episodes of `plan` that shard `s` runs.
std::vector<episode_ref> shard_episodes(const stored_plan& plan, shard_id s);

struct shard_files {
  std::filesystem::path dir, results, leases, state;
};
shard_files files_of(const std::filesystem::path& out, shard_id s);

/// The shard directories present under OUT/shards (any N), by (N, i).
std::vector<shard_id> shards_present(const std::filesystem::path& out);

/// A shard's state.json, written when it starts and when it ends.
struct shard_state {
  std::string state;       ///< "running", "finished" (every episode it ran was scored) or "failed"
  std::string host;
  long pid = 0;
  std::string slurm_job;   ///< "<array job>_<task>", empty outside Slurm
  std::vector<int> gpus;   ///< the GPUs it could lease (empty with --device cpu)
  std::string gpu_source;  ///< where that list came from (allocated_gpus.h)
  double started = 0, ended = 0;  ///< Unix seconds; ended 0 while running
  int episodes = 0, scored = 0, failed = 0, unstarted = 0;  ///< of this invocation (run_summary)
  std::string message;     ///< why it failed
};
void write_state(const std::filesystem::path& file, const shard_state& s);
/// nullopt when the file is missing or unreadable.
std::optional<shard_state> read_state(const std::filesystem::path& file);

/// Sets `o.part` to shard `s` of the plan stored in o.out/run.json (which must exist).
void select_shard(run_options& o, shard_id s);

}  // namespace pk::run
