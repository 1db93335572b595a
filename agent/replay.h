// Reading a transcript back: a readable rendering, and the comparison of a re-executed run
// with the recording, step by step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/transcript.h"

namespace pk::agent {

/// The conversation and outcome as Markdown (`md`) or as one line per step (`text`). Problems
/// found while reading are listed at the end; the readable part is always shown.
std::string render_transcript(const transcript_file& t, const std::string& format);

/// The verdict on the episode's work, from where it was judged: the final scoring of a `pkagent
/// run` episode (result.json beside the transcript), else the task's check; nullopt when nothing
/// scored it.
std::optional<std::string> verdict_text(const transcript_file& t);

struct step_match {
  enum verdict { identical, measured_only, differs, missing };
  int step = 0;
  verdict result = missing;
  std::string detail;  ///< for differs: the first differing line, then and now
};
std::string_view to_string(step_match::verdict v);

/// Compares each recorded observation of `then` with the re-executed one in `now`. What a
/// re-execution measures anew (durations such as "0.12 s", speedups "1.02x", percentages, timing
/// loop call counts, GPU indices and UUIDs, the judge's cache note and timing-check lines) is
/// compared as such: a step that differs only there is `measured_only`, not a difference.
std::vector<step_match> compare_observations(const transcript_file& then, const transcript_file& now);

}  // namespace pk::agent
