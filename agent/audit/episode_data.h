// One episode as its page shows it: the transcript, the result its final scoring wrote
// (result.json beside the transcript, for `pkagent run` episodes) and the pkb calls its commands
// made (pkb.jsonl beside it: each check, bench and submit with the solution it judged and the
// judge's report, each profile with its summary).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/transcript.h"

namespace pk::audit {

struct pkb_call {
  std::string command;                  ///< check, bench, submit, run, profile
  double requested_at = 0;              ///< UNIX seconds
  std::optional<int> exit;              ///< none: refused before it ran
  std::string refused;                  ///< why it did not run (no GPUs, multicast), else empty
  std::optional<std::string> solution;  ///< check/bench/submit: solution.py as judged
  nlohmann::json report;                ///< check/bench/submit: the judge's report (bench::to_json); null otherwise
  std::string output;                   ///< profile: its summary
  int step = 0;                         ///< the step whose command made the call; 0: not placed
};

struct episode_data {
  agent::transcript_file transcript;
  nlohmann::json result;        ///< result.json; null when there is none
  std::vector<pkb_call> calls;  ///< in the order they were made
  std::vector<std::string> problems;  ///< pkb.jsonl lines that could not be read

  bool prices_known() const;
  /// How the episode ended, in words: the outcome's reason, or that the transcript stops before
  /// an outcome (killed by a signal, a crash or still running).
  std::string ending() const;
};

/// Reads the episode of `path` (a transcript.jsonl or the directory holding it). Throws
/// std::runtime_error when the transcript cannot be opened.
episode_data load_episode(const std::filesystem::path& path);

/// UNIX seconds of an ISO 8601 UTC time ("2026-12-05T07:15:27Z", fractions allowed); nullopt when
/// it is not one.
std::optional<double> unix_seconds(const std::string& iso);

}  // namespace pk::audit
