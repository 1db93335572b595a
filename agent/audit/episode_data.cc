#include "agent/audit/episode_data.h"

#include <ctime>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "agent/episode_dir.h"

namespace pk::audit {
namespace fs = std::filesystem;
using nlohmann::json;

std::optional<double> unix_seconds(const std::string& iso) {
  std::tm tm{};
  const char* rest = ::strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return std::nullopt;
  double fraction = 0;
  if (*rest == '.') fraction = std::strtod(rest, nullptr);
  return static_cast<double>(::timegm(&tm)) + fraction;
}

bool episode_data::prices_known() const {
  const json& h = transcript.header;
  if (!h.is_object() || !h.contains("model")) return true;
  return h["model"].value("prices_usd_per_mtok", json::object()).value("known", true);
}

std::string episode_data::ending() const {
  if (transcript.finished()) {
    const json& o = transcript.outcome;
    std::string s = o.value("reason", "?");
    if (!o.value("message", "").empty()) s += ": " + o.value("message", "");
    return s;
  }
  return fmt::format(
      "unfinished: the transcript stops after step {} without an outcome, so the process ended before the episode "
      "did (killed by a signal such as SIGTERM or SIGKILL, a crash, a lost node) or is still running; every step "
      "it finished is shown",
      transcript.complete_steps());
}

namespace {

pkb_call call_of(const json& j) {
  pkb_call c;
  c.command = j.value("command", "?");
  c.requested_at = j.value("requested_at", 0.0);
  if (j.contains("exit") && j["exit"].is_number_integer()) c.exit = j["exit"].get<int>();
  c.refused = j.value("refused", "");
  if (j.contains("solution") && j["solution"].is_string()) c.solution = j["solution"].get<std::string>();
  c.report = j.value("report", json());
  c.output = j.value("output", "");
  return c;
}

// The pkb subcommands a step's command names, in order ("pkb check && pkb bench": check, bench).
std::vector<std::string> pkb_words(const std::string& command) {
  static const std::regex word(R"(\bpkb\s+([a-z]+))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(command.begin(), command.end(), word); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// The step whose command made each call: the calls in the order pkb logged them matched to the
// pkb subcommands the steps' commands name, in order; a named call that did not run (after a
// failed `&&`) is passed over because the next call cannot be placed before it ended. The header's
// start is whole seconds, hence the one-second allowance.
void place_calls(episode_data& e) {
  const json& h = e.transcript.header;
  const auto start = h.is_object() ? unix_seconds(h.value("started_at", "")) : std::nullopt;
  struct named { int step; std::string word; double ended; };
  std::vector<named> named_calls;
  for (const auto& [n, s] : e.transcript.steps) {
    if (s.observation.is_null() || !s.response.contains("action")) continue;
    for (auto& w : pkb_words(s.response["action"].value("command", "")))
      named_calls.push_back({n, w, s.observation.value("t", 0.0)});
  }
  std::size_t next = 0;
  for (auto& c : e.calls)
    for (std::size_t i = next; i < named_calls.size(); ++i) {
      const bool too_early = start && *start + named_calls[i].ended + 1.0 < c.requested_at;
      if (named_calls[i].word != c.command || too_early) continue;
      c.step = named_calls[i].step;
      next = i + 1;
      break;
    }
}

}  // namespace

episode_data load_episode(const fs::path& path) {
  fs::path file = path;
  if (fs::is_directory(path)) {
    auto latest = agent::latest_transcript(path);
    if (!latest) throw std::runtime_error(fmt::format("{}: holds no transcript.jsonl", path.string()));
    file = *latest;
  }
  episode_data e;
  e.transcript = agent::read_transcript(file);
  const fs::path dir = file.parent_path();
  if (std::ifstream in(dir / "result.json"); in) e.result = json::parse(in, nullptr, false);
  if (e.result.is_discarded()) e.result = json();
  if (std::ifstream in(dir / "pkb.jsonl"); in) {
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) e.calls.push_back(call_of(j));
      else e.problems.push_back(fmt::format("pkb.jsonl:{}: not a JSON object", n));
    }
  }
  place_calls(e);
  return e;
}

}  // namespace pk::audit
