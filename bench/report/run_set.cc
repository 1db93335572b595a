#include "bench/report/run_set.h"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::report {

run_set make_run_set(std::vector<std::pair<std::filesystem::path, metrics::run_summary>> runs,
                     const metrics::bootstrap_options& bootstrap) {
  run_set set;
  set.bootstrap = bootstrap;
  std::map<std::string, int> uses;
  for (auto& [dir, summary] : runs) {
    auto label = fmt::format("{} · {}", metrics::to_string(summary.mode), summary.model);
    ++uses[label];
    set.runs.push_back({label, dir, std::move(summary)});
  }
  // Two runs of the same mode and model are told apart by their run ids.
  for (auto& run : set.runs)
    if (uses[run.label] > 1) run.label += fmt::format(" ({})", run.summary.run_id);

  for (std::size_t a = 0; a < set.runs.size(); ++a)
    for (std::size_t b = 0; b < set.runs.size(); ++b)
      if (set.runs[a].summary.mode == metrics::run_mode::agent &&
          set.runs[b].summary.mode == metrics::run_mode::zeroshot)
        set.comparisons.emplace_back(a, b);
  if (set.comparisons.empty() && set.runs.size() == 2) set.comparisons.emplace_back(0, 1);
  return set;
}

run_set load_runs(const std::vector<std::filesystem::path>& paths, const metrics::bootstrap_options& bootstrap) {
  std::vector<std::pair<std::filesystem::path, metrics::run_summary>> runs;
  std::vector<metrics::skipped_line> skipped;
  for (const auto& path : paths) {
    auto file = path.extension() == ".jsonl" ? path : path / "results.jsonl";
    if (!std::filesystem::exists(file))
      throw std::invalid_argument(fmt::format(
          "{}: no such file; give the directory a run wrote (pkagent run --out DIR) or its results.jsonl",
          file.string()));
    auto read = metrics::read_results(file);
    skipped.insert(skipped.end(), read.skipped.begin(), read.skipped.end());
    if (read.results.empty())
      throw std::invalid_argument(fmt::format("{}: no valid result ({} line(s) skipped{})", file.string(),
                                              read.skipped.size(),
                                              read.skipped.empty() ? "" : ", first: " + describe(read.skipped.front())));
    try {
      for (auto& summary : metrics::summarize(read.results, bootstrap)) runs.emplace_back(path, std::move(summary));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", file.string(), e.what()));
    }
  }
  auto set = make_run_set(std::move(runs), bootstrap);
  set.skipped = std::move(skipped);
  return set;
}

}  // namespace pk::report
