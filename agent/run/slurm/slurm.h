// Slurm through the commands its users run (sbatch, squeue, scontrol), with pkagent's environment
// (SLURM_CONF included). No accounting database is needed: sacct is not used.
//
// OUT/slurm/slurm.json records what was submitted for a run: the shard count and, per submission,
// the array job, its shards and the merge job. Only `pkagent run --slurm` writes it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pk::run {

/// A Slurm command could not run or refused; the message names the command and quotes its stderr.
class slurm_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs a Slurm client command (argv[0] looked up in PATH) and returns its stdout.
std::string slurm_command(const std::vector<std::string>& argv);

/// Submits `script` with `options` (sbatch --parsable); returns the job id.
std::string sbatch(const std::vector<std::string>& options, const std::filesystem::path& script);

/// The jobs of `ids` ("123" or "123_4") that Slurm still holds, by "123_4" for array tasks and
/// "123" for plain jobs, with their state (PENDING, RUNNING, ...). A job not listed has ended.
/// nullopt when squeue cannot run here (not a Slurm host).
std::optional<std::map<std::string, std::string>> queued_jobs(const std::vector<std::string>& ids);

/// What `scontrol show job` says of a job (ended or not) while Slurm remembers it (MinJobAge).
struct job_info {
  std::string state;      ///< COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, RUNNING ...
  std::string reason;     ///< e.g. NonZeroExitCode
  std::string exit_code;  ///< "1:0" (code:signal)
};
std::optional<job_info> show_job(const std::string& id);

struct slurm_submission {
  std::string array_job;    ///< the array's job id
  std::vector<int> shards;  ///< its task ids: the shards it runs
  std::string merge_job;
  double submitted = 0;     ///< Unix seconds
};

struct slurm_record {
  int shards = 0;
  std::vector<slurm_submission> submissions;  ///< oldest first

  /// "<array>_<shard>" of the latest submission of `shard`; empty when it was never submitted.
  std::string job_of(int shard) const;
};

std::filesystem::path slurm_dir(const std::filesystem::path& out);  ///< OUT/slurm
/// nullopt when the run was never submitted; throws std::invalid_argument when the file is bad.
std::optional<slurm_record> read_slurm_record(const std::filesystem::path& out);
void write_slurm_record(const std::filesystem::path& out, const slurm_record& r);

}  // namespace pk::run
