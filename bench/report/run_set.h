// The runs a report covers: read from run directories, summarised, labelled, and paired for
// comparison (each agent run against each zero-shot run).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bench/metrics/aggregate.h"
#include "bench/metrics/results_file.h"

namespace pk::report {

struct report_run {
  std::string label;  // short and unique within the report, e.g. "agent · demo"
  std::filesystem::path dir;
  metrics::run_summary summary;
  /// Its results as read (load_runs), in file order: the episode pages link each to its transcript.
  std::vector<metrics::episode_result> results;
};

struct run_set {
  std::vector<report_run> runs;
  std::vector<metrics::skipped_line> skipped;
  std::vector<std::pair<std::size_t, std::size_t>> comparisons;  // indices into runs: (a, b)
  metrics::bootstrap_options bootstrap;
};

/// Reads DIR/results.jsonl (or a .jsonl file given directly) for each path. Throws
/// std::invalid_argument (bad input) naming the path when one is missing or holds no valid result.
/// `labels[i]` (optional) names the run(s) of paths[i]; the rest get short_label's.
run_set load_runs(const std::vector<std::filesystem::path>& paths, const metrics::bootstrap_options& bootstrap,
                  const std::vector<std::string>& labels = {});

/// Labels and pairs already-summarised runs (load_runs uses it; tests call it directly). A run
/// whose label is given keeps it; labels shared by several runs get " #2", " #3" ...
run_set make_run_set(std::vector<std::pair<std::filesystem::path, metrics::run_summary>> runs,
                     const metrics::bootstrap_options& bootstrap, const std::vector<std::string>& given = {});

/// A run's default label, short enough for a table header: "agent · gpt-5"; an openai-compatible
/// model by its model id without organisation ("agent · Qwen2.5-Coder-32B"), anything longer
/// than max_label_model characters cut with "…".
std::string short_label(const metrics::run_summary& run);
inline constexpr std::size_t max_label_model = 22;

}  // namespace pk::report
