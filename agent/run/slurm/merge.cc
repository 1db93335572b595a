#include "agent/run/slurm/merge.h"

#include <fmt/format.h>

#include "agent/run/atomic_file.h"
#include "bench/report/document.h"
#include "bench/report/markdown.h"
#include "bench/report/run_set.h"
#include "bench/suite/suite.h"

namespace pk::run {
namespace fs = std::filesystem;

merge_summary merge_run(const fs::path& out, const run_status& status, const std::vector<bench::problem>& suite) {
  const stored_plan& plan = status.plan;
  const run_ledger ledger = read_ledger(out, plan.run_id);
  merge_summary m;
  m.skipped_lines = static_cast<int>(ledger.skipped.size());

  // Lost episodes carry the model name the shards recorded (a configured name, which run.json's
  // --model text may only point to).
  run_facts facts{plan.run_id, metrics::parse_mode(plan.mode).value_or(metrics::run_mode::agent), plan.model,
                  plan.world, plan.device};
  if (!ledger.results.empty()) facts.model = ledger.results.begin()->second.model;

  std::map<episode_ref, metrics::episode_result> lines = ledger.results;  // (problem, sample) order
  const auto episodes = plan_episodes(plan);
  m.episodes = static_cast<int>(episodes.size());
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const episode_ref& e = episodes[i];
    if (lines.count(e)) continue;
    const bool lost = status.shard_count > 0 &&
                      status.shards.at(static_cast<std::size_t>(shard_of(i, status.shard_count))).lost;
    if (!lost) {
      ++m.waiting;
      continue;
    }
    lines[e] = infrastructure_failure(out, bench::find_problem(suite, std::to_string(e.problem_id)), e.sample, facts,
                                      "shard_lost");
  }
  std::string text;
  for (const auto& [key, r] : lines) {
    text += metrics::to_json(r).dump() + "\n";
    if (metrics::is_infrastructure_failure(r)) ++m.infrastructure;
    else ++m.scored;
  }
  write_file_atomically(out / "results.jsonl", text);
  if (!lines.empty()) {
    const auto set = report::load_runs({out}, {});
    write_file_atomically(out / "report.md", report::render_markdown(report::build_document(set)));
  }
  return m;
}

int merge_command(const fs::path& out, const fs::path& suite_dir) {
  const auto suite = bench::load_suite(suite_dir.empty() ? bench::default_suite_dir() : suite_dir);
  const merge_summary m = merge_run(out, read_status(out), suite);
  fmt::print("{}: merged {} of {} episodes ({} infrastructure failure(s), {} still to run) into {}; report: {}\n",
             out.string(), m.scored, m.episodes, m.infrastructure, m.waiting, (out / "results.jsonl").string(),
             (out / "report.md").string());
  if (m.skipped_lines > 0)
    fmt::print(stderr, "pkagent run: {} unreadable result line(s) in the shards' files were left out\n",
               m.skipped_lines);
  return 0;
}

}  // namespace pk::run
