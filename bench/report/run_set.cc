#include "bench/report/run_set.h"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::report {

std::string short_label(const metrics::run_summary& run) {
  std::string model = run.model;
  if (model.starts_with("openai-compatible:")) {
    model = model.substr(model.rfind('#') + 1);
    if (const auto slash = model.rfind('/'); slash != std::string::npos && slash + 1 < model.size())
      model = model.substr(slash + 1);
  }
  // Cut at a character boundary (UTF-8 continuation bytes are 10xxxxxx).
  if (model.size() > max_label_model) {
    std::size_t cut = max_label_model - 1;
    while (cut > 0 && (static_cast<unsigned char>(model[cut]) & 0xC0) == 0x80) --cut;
    model = model.substr(0, cut) + "…";
  }
  return fmt::format("{} · {}", metrics::to_string(run.mode), model);
}

run_set make_run_set(std::vector<std::pair<std::filesystem::path, metrics::run_summary>> runs,
                     const metrics::bootstrap_options& bootstrap, const std::vector<std::string>& given) {
  run_set set;
  set.bootstrap = bootstrap;
  std::map<std::string, int> uses;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto& [dir, summary] = runs[i];
    auto label = i < given.size() && !given[i].empty() ? given[i] : short_label(summary);
    ++uses[label];
    set.runs.push_back({label, dir, std::move(summary), {}});
  }
  // Runs that share a label are numbered in order (the runs table shows their run ids).
  std::map<std::string, int> seen;
  for (auto& run : set.runs)
    if (uses[run.label] > 1 && ++seen[run.label] > 1) run.label += fmt::format(" #{}", seen[run.label]);

  for (std::size_t a = 0; a < set.runs.size(); ++a)
    for (std::size_t b = 0; b < set.runs.size(); ++b)
      if (set.runs[a].summary.mode == metrics::run_mode::agent &&
          set.runs[b].summary.mode == metrics::run_mode::zeroshot)
        set.comparisons.emplace_back(a, b);
  if (set.comparisons.empty() && set.runs.size() == 2) set.comparisons.emplace_back(0, 1);
  return set;
}

run_set load_runs(const std::vector<std::filesystem::path>& paths, const metrics::bootstrap_options& bootstrap,
                  const std::vector<std::string>& labels) {
  if (labels.size() > paths.size())
    throw std::runtime_error(fmt::format("{} --label given for {} run path(s): give at most one per RUN_DIR, in order",
                                         labels.size(), paths.size()));
  std::vector<std::pair<std::filesystem::path, metrics::run_summary>> runs;
  std::vector<std::string> given;  // per run, from its path's --label
  std::vector<metrics::skipped_line> skipped;
  std::vector<std::vector<metrics::episode_result>> results;  // per run, parallel to `runs`
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto& path = paths[i];
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
      for (auto& summary : metrics::summarize(read.results, bootstrap)) {
        std::vector<metrics::episode_result> mine;
        for (const auto& r : read.results)
          if (r.run_id == summary.run_id && r.mode == summary.mode && r.model == summary.model) mine.push_back(r);
        results.push_back(std::move(mine));
        runs.emplace_back(path, std::move(summary));
        given.push_back(i < labels.size() ? labels[i] : std::string());
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", file.string(), e.what()));
    }
  }
  auto set = make_run_set(std::move(runs), bootstrap, given);
  for (std::size_t i = 0; i < set.runs.size(); ++i) set.runs[i].results = std::move(results[i]);
  set.skipped = std::move(skipped);
  return set;
}

}  // namespace pk::report
