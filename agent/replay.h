// Reading a transcript back: a readable rendering, and the comparison of a re-executed run
// with the recording, step by step.
#pragma once

#include <string>
#include <vector>

#include "agent/transcript.h"

namespace pk::agent {

/// The conversation and outcome as Markdown (`md`) or as one line per step (`text`). Problems
/// found while reading are listed at the end; the readable part is always shown.
std::string render_transcript(const transcript_file& t, const std::string& format);

struct step_match {
  enum verdict { identical, timing_only, differs, missing };
  int step = 0;
  verdict result = missing;
  std::string detail;  ///< for differs: the first differing line, then and now
};
std::string_view to_string(step_match::verdict v);

/// Compares each recorded observation of `then` with the re-executed one in `now`. Figures with a
/// time unit ("0.12 s", "35ms", "1.5 sec") are compared as equal when only they differ.
std::vector<step_match> compare_observations(const transcript_file& then, const transcript_file& now);

}  // namespace pk::agent
