// The pages `pkagent report --html FILE` writes beside its report, in FILE's stem + "-pages/":
// one page per episode (agent/audit's renderer, the one `pkagent replay --format html` uses), one
// per problem with every run side by side, and one per compared pair of samples (agent against
// zero-shot, or the two runs given) step by step. Static files that link to each other relatively,
// so the folder can be moved or archived with the report.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "bench/report/run_set.h"

namespace pk::report {

struct written_pages {
  std::filesystem::path dir;  ///< the folder written
  /// (run index, problem id, sample) -> href relative to the report; absent: no transcript.
  std::map<std::tuple<std::size_t, int, int>, std::string> episodes;
  std::map<int, std::string> problems;  ///< problem id -> href relative to the report
  int pages = 0;
};

/// Writes the pages for the report `report_file` (replacing an earlier folder of them). An episode
/// whose transcript is missing or unreadable gets no page; its row says so.
written_pages write_pages(const run_set& set, const std::filesystem::path& report_file);

/// The report's HTML section that links every result to its episode page and every problem to
/// its page: one row per problem, one column per run.
std::string episode_links_section(const run_set& set, const written_pages& pages);

}  // namespace pk::report
