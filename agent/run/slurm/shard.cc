#include "agent/run/slurm/shard.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/run/atomic_file.h"

namespace pk::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string shard_id::text() const { return fmt::format("{}/{}", index, count); }
std::string shard_id::name() const { return fmt::format("{}-of-{}", index, count); }

shard_id parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view part, int& v) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  shard_id s;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), s.index) ||
      !number(text.substr(slash + 1), s.count))
    throw std::invalid_argument(fmt::format("--shard {}: write I/N, e.g. 0/4 for the first of four shards", text));
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw std::invalid_argument(fmt::format("--shard {}: I must be 0 to N-1 and N at least 1", text));
  return s;
}

stored_plan read_plan(const fs::path& out) {
  const fs::path file = out / "run.json";
  std::ifstream in(file);
  if (!in)
    throw std::invalid_argument(fmt::format("{}: no run plan here; is {} the directory `pkagent run --out` wrote, "
                                            "and on a filesystem this host sees?",
                                            file.string(), out.string()));
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != "pkagent-run")
    throw std::invalid_argument(fmt::format("{}: not a pkagent run plan", file.string()));
  stored_plan p;
  try {
    p.run_id = j.at("run_id").get<std::string>();
    p.mode = j.at("mode").get<std::string>();
    p.model = j.at("model").get<std::string>();
    p.device = j.at("device").get<bench::device_kind>();
    p.world = j.at("world").get<int>();
    p.samples = j.at("samples").get<int>();
    p.problems = j.at("problems").get<std::vector<int>>();
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not a pkagent run plan: {}", file.string(), e.what()));
  }
  std::sort(p.problems.begin(), p.problems.end());
  return p;
}

std::vector<episode_ref> plan_episodes(const stored_plan& plan) {
  std::vector<episode_ref> out;
  for (int k = 0; k < plan.samples; ++k)
    for (int id : plan.problems) out.push_back({id, k});
  return out;
}

int shard_of(std::size_t position, int count) { return static_cast<int>(position % static_cast<std::size_t>(count)); }

std::vector<episode_ref> shard_episodes(const stored_plan& plan, shard_id s) {
  const auto all = plan_episodes(plan);
  std::vector<episode_ref> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (shard_of(i, s.count) == s.index) out.push_back(all[i]);
  return out;
}

shard_files files_of(const fs::path& out, shard_id s) {
  const fs::path dir = out / "shards" / s.name();
  return {dir, dir / "results.jsonl", dir / "leases.jsonl", dir / "state.json"};
}

std::vector<shard_id> shards_present(const fs::path& out) {
  static const std::regex name(R"((\d+)-of-(\d+))");
  std::vector<shard_id> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "shards", ec)) {
    std::smatch m;
    const std::string n = e.path().filename().string();
    if (!e.is_directory() || !std::regex_match(n, m, name)) continue;
    try {
      found.push_back(parse_shard(m[1].str() + "/" + m[2].str()));
    } catch (const std::invalid_argument&) {
      // a directory of another name: not a shard
    }
  }
  std::sort(found.begin(), found.end(),
            [](const shard_id& a, const shard_id& b) { return std::pair(a.count, a.index) < std::pair(b.count, b.index); });
  return found;
}

void write_state(const fs::path& file, const shard_state& s) {
  const json j = {{"state", s.state},         {"host", s.host},          {"pid", s.pid},
                  {"slurm_job", s.slurm_job}, {"gpus", s.gpus},          {"gpu_source", s.gpu_source},
                  {"started", s.started},     {"ended", s.ended},        {"episodes", s.episodes},
                  {"scored", s.scored},       {"failed", s.failed},      {"unstarted", s.unstarted},
                  {"message", s.message}};
  write_file_atomically(file, j.dump(2) + "\n");
}

std::optional<shard_state> read_state(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  shard_state s;
  s.state = j.value("state", "");
  s.host = j.value("host", "");
  s.pid = j.value("pid", 0L);
  s.slurm_job = j.value("slurm_job", "");
  s.gpus = j.value("gpus", std::vector<int>{});
  s.gpu_source = j.value("gpu_source", "");
  s.started = j.value("started", 0.0);
  s.ended = j.value("ended", 0.0);
  s.episodes = j.value("episodes", 0);
  s.scored = j.value("scored", 0);
  s.failed = j.value("failed", 0);
  s.unstarted = j.value("unstarted", 0);
  s.message = j.value("message", "");
  return s;
}

void select_shard(run_options& o, shard_id s) {
  const auto mine = shard_episodes(read_plan(o.out), s);
  auto set = std::make_shared<std::set<episode_ref>>(mine.begin(), mine.end());
  const shard_files f = files_of(o.out, s);
  o.part = run_part{[set](int id, int sample) { return set->count({id, sample}) > 0; }, f.results, f.leases};
}

}  // namespace pk::run
