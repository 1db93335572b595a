#include "agent/run/run_ledger.h"

#include <regex>

#include <nlohmann/json.hpp>

#include "agent/episode_dir.h"
#include "agent/run/final_score.h"

namespace pk::run {
namespace fs = std::filesystem;

std::vector<fs::path> results_files(const fs::path& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::exists(out / "results.jsonl", ec)) files.push_back(out / "results.jsonl");
  for (const shard_id& s : shards_present(out)) {
    const fs::path f = files_of(out, s).results;
    if (fs::exists(f, ec)) files.push_back(f);
  }
  return files;
}

run_ledger read_ledger(const fs::path& out, const std::string& run_id) {
  run_ledger l;
  std::map<episode_ref, std::string> chosen_text;
  for (const fs::path& file : results_files(out)) {
    auto read = metrics::read_results(file);
    l.skipped.insert(l.skipped.end(), read.skipped.begin(), read.skipped.end());
    for (auto& r : read.results) {
      if (r.run_id != run_id) continue;
      const episode_ref key{r.problem_id, r.sample};
      std::string text = metrics::to_json(r).dump();
      auto it = l.results.find(key);
      const bool better = it == l.results.end() ||
                          (metrics::is_infrastructure_failure(it->second) && !metrics::is_infrastructure_failure(r)) ||
                          (metrics::is_infrastructure_failure(it->second) == metrics::is_infrastructure_failure(r) &&
                           text < chosen_text[key]);
      if (!better) continue;
      chosen_text[key] = std::move(text);
      l.results[key] = std::move(r);
    }
  }
  return l;
}

model_spend transcript_spend(const fs::path& episode_dir) {
  model_spend s;
  const auto file = agent::latest_transcript(episode_dir);
  if (!file) return s;
  // The reader checked each event's fields: a response line it kept holds a response.
  for (const auto& e : agent::read_transcript(*file).events) {
    if (e.value("type", "") != "response") continue;
    const llm::response r = agent::event_as<agent::response_event>(e).response;
    s.tokens_in += r.tokens.input;
    s.tokens_out += r.tokens.output;
    s.dollars += r.cost_usd;
  }
  return s;
}

double run_dollars(const fs::path& out, const std::string& run_id) {
  const run_ledger l = read_ledger(out, run_id);
  double dollars = 0;
  for (const auto& [key, r] : l.results)
    if (!metrics::is_infrastructure_failure(r)) dollars += r.dollars;
  // Episode directories are OUT/episodes/<id>_<stem>/sample-<k>.
  static const std::regex problem_dir(R"((\d+)_.*)"), sample_dir(R"(sample-(\d+))");
  std::error_code ec;
  for (const auto& p : fs::directory_iterator(out / "episodes", ec)) {
    std::smatch pm;
    const std::string pname = p.path().filename().string();
    if (!p.is_directory() || !std::regex_match(pname, pm, problem_dir)) continue;
    for (const auto& e : fs::directory_iterator(p.path(), ec)) {
      std::smatch sm;
      const std::string ename = e.path().filename().string();
      if (!e.is_directory() || !std::regex_match(ename, sm, sample_dir)) continue;
      const episode_ref key{std::stoi(pm[1].str()), std::stoi(sm[1].str())};
      auto it = l.results.find(key);
      if (it != l.results.end() && !metrics::is_infrastructure_failure(it->second)) continue;
      dollars += transcript_spend(e.path()).dollars;
    }
  }
  return dollars;
}

metrics::episode_result infrastructure_failure(const fs::path& out, const bench::problem& p, int sample,
                                               const run_facts& facts, const std::string& end_reason) {
  const fs::path ep = episode_dir(out, p, sample);
  const model_spend spent = transcript_spend(ep);
  episode_facts f;
  f.run_id = facts.run_id;
  f.mode = facts.mode;
  f.model = facts.model;
  f.sample = sample;
  f.end_reason = end_reason;
  f.used.input_tokens = spent.tokens_in;
  f.used.output_tokens = spent.tokens_out;
  f.used.dollars = spent.dollars;
  std::error_code ec;
  if (fs::exists(ep / "transcript.jsonl", ec)) f.transcript = fs::relative(ep / "transcript.jsonl", out).string();
  metrics::episode_result r = episode_record(p, facts.world, f);
  r.device = facts.device;
  r.verdict = std::string(metrics::infrastructure_verdict);
  r.correct = false;
  return r;
}

}  // namespace pk::run
