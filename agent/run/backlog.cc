#include "agent/run/backlog.h"

#include <optional>
#include <utility>

#include "agent/run/run_ledger.h"
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

run_backlog take_stock(const run_options& o, const std::string& run_id, const std::vector<bench::problem>& problems) {
  run_backlog b;
  const run_ledger ledger = read_ledger(o.out, run_id);
  for (int k = 0; k < o.samples; ++k)
    for (const auto& problem : problems) {
      if (o.part && !o.part->includes(problem.id, k)) continue;
      ++b.episodes;
      if (auto it = ledger.results.find({problem.id, k});
          it != ledger.results.end() && !metrics::is_infrastructure_failure(it->second)) {
        b.scored.push_back(it->second);
        ++b.skipped;
        continue;
      }
      if (auto r = saved_result(episode_dir(o.out, problem, k) / "result.json")) {
        metrics::append_result(results_file(o), *r);
        b.scored.push_back(std::move(*r));
        ++b.skipped;
        continue;
      }
      b.pending.push_back({&problem, k});
    }
  return b;
}

}  // namespace pk::run
