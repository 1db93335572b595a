// `pkb profile`: Nsight Compute over one visible trial of the candidate, summarised per kernel.
//
// The command runs inside the episode's sandbox with the lease's GPUs. It first runs the trial
// once without the profiler, which fills a reference cache private to that sandbox (so the
// reference's own kernels never reach the profile), then runs it again under
// `ncu --clock-control none`, writes the full report into the workspace (profile.ncu-rep, for
// `ncu --import` from the shell) and prints the raw metrics as CSV after a marker line.
// summarize_profile() turns that output into the table the model reads: per kernel, launches,
// time, achieved DRAM and SM throughput, NVLink traffic, registers and local-memory (spill)
// instructions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/run/pkb_tool/tool_texts.h"

namespace pk::pkb {

struct profile_request {
  std::filesystem::path ncu;        ///< the ncu executable
  std::filesystem::path pkagent;    ///< pkagent as the sandbox sees it
  std::filesystem::path suite_dir;  ///< the problems directory
  int problem_id = 0;
  int world = 2;
  long long seed = 1;               ///< the visible seed of `pkb check`
  int ncu_timeout_s = 0;            ///< ncu is stopped after this long (0: never), so its log survives a hang
  std::string stopped_note;         ///< printed when ncu is stopped (prompts/pkb/profile/stopped.md)
};

/// The shell line to run in the sandbox (workspace at /workspace, GPUs 0..world-1 visible).
std::string profile_command(const profile_request& r);

/// The marker line before the CSV in that command's output.
inline constexpr std::string_view csv_marker = "==PKB== ncu csv";

/// One kernel name's launches, summed or averaged over every launch on every rank.
struct kernel_summary {
  std::string name;
  int launches = 0;
  double total_us = 0;
  std::optional<double> dram_pct;      ///< mean of dram__throughput, % of peak
  std::optional<double> sm_pct;        ///< mean of sm__throughput, % of peak
  std::optional<double> nvlink_gbps;   ///< mean NVLink receive + transmit, GB/s
  std::optional<int> registers;        ///< per thread (the maximum over launches)
  std::optional<double> local_ops;     ///< local-memory load + store instructions per launch (spills)
};

/// Parses `ncu --import R --csv --page raw --print-units base` output. Throws
/// std::runtime_error when the header lacks the kernel name column.
std::vector<kernel_summary> parse_ncu_csv(std::string_view csv);

/// The model-facing text: the table (longest total time first, at most `max_rows` kernels and a
/// count of the rest), or the shaped failure output when the command printed no CSV. The
/// sentences around the table are `texts`.
std::string summarize_profile(std::string_view output, int exit_code, const profile_texts& texts,
                              std::size_t max_rows = 15);

}  // namespace pk::pkb
