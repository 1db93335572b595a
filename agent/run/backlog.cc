#include "agent/run/backlog.h"

#include <optional>
#include <set>
#include <utility>

#include "agent/run/run_plan.h"
#include "bench/metrics/results_file.h"
#include "config/read_file.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The result an episode recorded in its own directory, if it is there and readable.
std::optional<metrics::episode_result> saved_result(const fs::path& file) {
  const std::optional<std::string> text = try_read_file(file);
  if (!text) return std::nullopt;
  const json j = json::parse(*text, nullptr, false);
  try {
    return metrics::result_from_json(j);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

run_backlog take_stock(const fs::path& out, const std::string& run_id, const std::vector<bench::problem>& problems,
                       int samples) {
  run_backlog b;
  const fs::path results = out / "results.jsonl";
  std::set<std::pair<int, int>> recorded;  // (problem id, sample)
  if (fs::exists(results)) {
    for (auto& r : metrics::read_results(results).results) {
      if (r.run_id != run_id) continue;
      recorded.insert({r.problem_id, r.sample});
      b.scored.push_back(std::move(r));
    }
  }
  for (int k = 0; k < samples; ++k)
    for (const auto& problem : problems) {
      ++b.episodes;
      if (recorded.count({problem.id, k})) {
        ++b.skipped;
        continue;
      }
      if (auto r = saved_result(episode_dir(out, problem, k) / "result.json")) {
        metrics::append_result(results, *r);
        b.scored.push_back(std::move(*r));
        ++b.skipped;
        continue;
      }
      b.pending.push_back({&problem, k});
    }
  return b;
}

}  // namespace pk::run
