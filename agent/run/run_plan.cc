#include "agent/run/run_plan.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <fstream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "agent/run/atomic_file.h"
#include "agent/llm/llm.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

int parse_int(std::string_view text, std::string_view whole) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(fmt::format("--problems {}: '{}' is not a problem id; write e.g. 1-8,13 or all",
                                            whole, text));
  return v;
}

}  // namespace

std::filesystem::path results_file(const run_options& o) {
  return o.part ? o.part->results : o.out / "results.jsonl";
}

std::filesystem::path leases_file(const run_options& o) { return o.part ? o.part->leases : o.out / "leases.jsonl"; }

std::vector<int> parse_problem_list(std::string_view spec, const std::vector<bench::problem>& suite) {
  std::set<int> known;
  for (const auto& p : suite) known.insert(p.id);
  std::string known_text;
  for (int id : known) known_text += fmt::format("{}{}", known_text.empty() ? "" : ",", id);
  if (spec == "all") return {known.begin(), known.end()};
  std::set<int> chosen;
  std::string_view rest = spec;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    const auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      const int id = parse_int(part, spec);
      if (!known.count(id))
        throw std::invalid_argument(fmt::format("--problems {}: there is no problem {}; the suite has {}", spec, id,
                                                known_text));
      chosen.insert(id);
    } else {
      const int lo = parse_int(part.substr(0, dash), spec), hi = parse_int(part.substr(dash + 1), spec);
      if (lo > hi) throw std::invalid_argument(fmt::format("--problems {}: range {} runs backwards", spec, part));
      int found = 0;
      for (int id = lo; id <= hi; ++id)
        if (known.count(id)) chosen.insert(id), ++found;
      if (!found)
        throw std::invalid_argument(fmt::format("--problems {}: no problem in {}; the suite has {}", spec, part,
                                                known_text));
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return {chosen.begin(), chosen.end()};
}

json plan_json(const run_options& o, const std::string& run_id) {
  return {{"format", "pkagent-run"}, {"version", 1}, {"run_id", run_id},
          {"mode", std::string(metrics::to_string(o.mode))}, {"model", llm::model_identity(o.model)}, {"device", o.device},
          {"world", o.world}, {"samples", o.samples}, {"problems", o.problems},
          {"final_trials", o.final_trials}, {"check_trials", o.check_trials}};
}

std::string open_run_dir(const run_options& o) {
  fs::create_directories(o.out);
  const fs::path file = o.out / "run.json";
  if (fs::exists(file)) {
    std::ifstream in(file);
    const json old = json::parse(in, nullptr, false);
    if (old.is_discarded() || !old.is_object() || old.value("format", "") != "pkagent-run")
      throw std::invalid_argument(fmt::format("{}: not a pkagent run plan; choose another --out", file.string()));
    const json now = plan_json(o, "");
    for (const char* key : {"mode", "model", "device", "world", "final_trials"}) {
      json was = old.value(key, json());
      // Compared as identities: a plan may hold an openai-compatible spec with its port.
      if (std::string_view(key) == "model" && was.is_string()) was = llm::model_identity(was.get<std::string>());
      if (was != now[key])
        throw std::invalid_argument(fmt::format(
            "{} holds a run with {} = {}, not {}; rerun with the same options to resume it, or choose another --out",
            o.out.string(), key, was.dump(), now[key].dump()));
    }
    std::string id = old.value("run_id", "");
    // Samples and problems may grow; record the union so the report knows the whole plan.
    json plan = plan_json(o, id);
    std::set<int> problems(o.problems.begin(), o.problems.end());
    for (const json& p : old.value("problems", json::array())) problems.insert(p.get<int>());
    plan["problems"] = std::vector<int>(problems.begin(), problems.end());
    plan["samples"] = std::max(o.samples, old.value("samples", 0));
    // Shards of one run open it at once from several hosts: write only a grown plan, and whole.
    if (plan != old) write_file_atomically(file, plan.dump(2) + '\n');
    return id;
  }
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  const std::string id = fmt::format("{}-{}", fs::absolute(o.out).lexically_normal().filename().string(), stamp);
  // Of several processes creating the run at once, one wins; the others continue its run.
  if (!create_file_exclusively(file, plan_json(o, id).dump(2) + '\n')) return open_run_dir(o);
  return id;
}

fs::path episode_dir(const fs::path& out, const bench::problem& p, int sample) {
  return out / "episodes" / p.name() / fmt::format("sample-{}", sample);
}

}  // namespace pk::run
