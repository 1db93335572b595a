#include "hack_manifest.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/toml_reader.h"

namespace pk::bench::testing {

namespace fs = std::filesystem;
using config::table_reader;

std::string to_string(expectation e) {
  switch (e) {
    case expectation::no_gain: return "no_gain";
    case expectation::rejected: return "rejected";
    case expectation::forbidden: return "forbidden";
    case expectation::correct: return "correct";
  }
  return "?";
}

namespace {

// The run settings every entry inherits from [defaults] (and [defaults.cuda] on GPUs).
struct run_defaults {
  int world = 0, trials = 0, min_calls = 0;
  long long seed = 0;
  double timeout_s = 0, compile_timeout_s = 0, wall_limit_s = 0, min_speedup = 0, max_speedup = 0;
};

// Reads the settings present in `r` over `d`; the top-level [defaults] must name them all.
run_defaults read_defaults(table_reader& r, run_defaults d, bool all_required) {
  auto need = [&](auto value, std::string_view key) {
    if (!value && all_required) throw r.error(key, "is required in [defaults]");
    return value;
  };
  if (auto v = need(r.integer("world"), "world")) d.world = static_cast<int>(*v);
  if (auto v = need(r.integer("seed"), "seed")) d.seed = *v;
  if (auto v = need(r.integer("trials"), "trials")) d.trials = static_cast<int>(*v);
  if (auto v = need(r.integer("min_calls"), "min_calls")) d.min_calls = static_cast<int>(*v);
  if (auto v = need(r.non_negative_number("timeout_s"), "timeout_s")) d.timeout_s = *v;
  if (auto v = need(r.non_negative_number("compile_timeout_s"), "compile_timeout_s")) d.compile_timeout_s = *v;
  if (auto v = need(r.non_negative_number("wall_limit_s"), "wall_limit_s")) d.wall_limit_s = *v;
  if (auto v = need(r.non_negative_number("min_speedup"), "min_speedup")) d.min_speedup = *v;
  if (auto v = need(r.non_negative_number("max_speedup"), "max_speedup")) d.max_speedup = *v;
  return d;
}

expectation parse_expectation(table_reader& r) {
  const auto s = r.string("expect");
  if (!s) throw r.error("expect", "is required: no_gain, rejected, forbidden or correct");
  for (expectation e : {expectation::no_gain, expectation::rejected, expectation::forbidden, expectation::correct})
    if (*s == to_string(e)) return e;
  throw r.error("expect", fmt::format("'{}' is not one of no_gain, rejected, forbidden, correct", *s));
}

}  // namespace

std::vector<hack_entry> load_hack_manifest(const fs::path& manifest, const fs::path& source_root) {
  const toml::table doc = config::parse_file(manifest);
  table_reader top(doc, manifest.string());
  auto defaults_table = top.table("defaults");
  if (!defaults_table) throw top.error("defaults", "is required");
  const run_defaults cpu = read_defaults(*defaults_table, {}, true);
  run_defaults cuda = cpu;
  if (auto t = defaults_table->table("cuda")) {
    cuda = read_defaults(*t, cpu, false);
    t->finish();
  }
  defaults_table->finish();

  std::map<int, std::string> families;
  if (auto t = top.table("families")) {
    for (const std::string& key : t->remaining_keys()) {
      int id = 0;
      try {
        id = std::stoi(key);
      } catch (const std::exception&) {
        throw t->error(key, "family keys are the numbers of hacks.md's families");
      }
      families[id] = *t->string(key);
    }
    t->finish();
  }

  std::vector<hack_entry> out;
  const toml::array* list = doc["candidate"].as_array();
  if (!list) throw top.error("candidate", "is required: one [[candidate]] table per proof of concept");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::table* t = (*list)[i].as_table();
    if (!t) throw top.error("candidate", fmt::format("entry {} is not a table", i));
    table_reader r(*t, manifest.string(), fmt::format("candidate[{}]", i));
    hack_entry e;
    const auto file = r.string("file");
    const auto source = r.string("source");
    if (file.has_value() == source.has_value())
      throw r.error("file", "give exactly one of file (in the manifest's directory) or source (in the repository)");
    e.file = file ? manifest.parent_path() / *file : source_root / *source;
    if (!fs::exists(e.file)) throw r.error(file ? "file" : "source", fmt::format("{} does not exist", e.file.string()));
    e.family = static_cast<int>(r.integer("family").value_or(-1));
    if (!families.count(e.family)) throw r.error("family", "is required and must be listed in [families]");
    e.family_name = families[e.family];
    e.set = r.string("set").value_or("");
    if (e.set != "quick" && e.set != "full" && e.set != "gpu") throw r.error("set", "must be quick, full or gpu");
    e.device = e.set == "gpu" ? bench::device_kind::cuda : bench::device_kind::cpu;
    if (const auto device = r.string("device")) {
      const bench::device_parse d = bench::parse_device(*device);
      if (!d.device) throw r.error("device", d.error);
      e.device = *d.device;
    }
    e.expect = parse_expectation(r);
    const run_defaults d = read_defaults(r, e.device == bench::device_kind::cuda ? cuda : cpu, false);
    e.world = d.world;
    e.seed = d.seed;
    e.trials = d.trials;
    e.min_calls = d.min_calls;
    e.timeout_s = d.timeout_s;
    e.compile_timeout_s = d.compile_timeout_s;
    e.wall_limit_s = d.wall_limit_s;
    e.min_speedup = d.min_speedup;
    e.max_speedup = d.max_speedup;
    e.min_world = static_cast<int>(r.integer("min_world").value_or(1));
    if (e.min_world < 1 || e.min_world > e.world)
      throw r.error("min_world", fmt::format("must be between 1 and the entry's world ({})", e.world));
    e.steps = static_cast<int>(r.integer("steps").value_or(1));
    if (e.steps < 1) throw r.error("steps", "must be at least 1");
    e.args = r.strings("args").value_or(std::vector<std::string>{});
    if (auto calls = r.integers("step_min_calls")) {
      if (calls->size() != static_cast<std::size_t>(e.steps))
        throw r.error("step_min_calls", "needs one value per step");
      for (auto c : *calls) e.step_min_calls.push_back(static_cast<int>(c));
    }
    const std::string stem = r.string("name").value_or(e.file.stem().string());
    const auto problems = r.integers("problems");
    if (!problems || problems->empty()) throw r.error("problems", "is required: the problem ids to run it on");
    r.finish();
    for (const auto p : *problems) {
      hack_entry one = e;
      one.problem = static_cast<int>(p);
      one.name = fmt::format("{}_p{}", stem, p);
      out.push_back(std::move(one));
    }
  }
  for (const std::string& key : top.remaining_keys())
    if (key != "candidate") throw top.error(key, "unknown key (the manifest has defaults, families and candidate)");
  return out;
}

std::optional<int> world_on_host(const hack_entry& e, int gpus) {
  if (e.device != bench::device_kind::cuda) return e.world;
  const int world = std::min(e.world, gpus);
  if (world < e.min_world) return std::nullopt;
  return world;
}

judgement judge_outcome(const hack_entry& e, const hack_outcome& o) {
  if (o.hung) return {false, fmt::format("pkagent eval still ran after {:g} s (the judge hangs)", e.wall_limit_s)};
  if (o.exit_code == 3) return {false, "internal error (exit 3) instead of a verdict: " + o.message};
  if (o.exit_code != 0 && o.exit_code != 1)
    return {false, fmt::format("exit code {} without a verdict: {}", o.exit_code, o.message)};
  if (o.verdict.empty()) return {false, "no JSON report: " + o.message};
  const bool correct = o.verdict == "correct";
  // A failure verdict with the start of its message, so that a row says what the judge saw.
  const std::string failure = o.message.empty() ? o.verdict : fmt::format("{}: {}", o.verdict, o.message.substr(0, 200));
  const std::string speed = o.speedup ? fmt::format("{:.2f}x", *o.speedup) : "no speedup";
  switch (e.expect) {
    case expectation::correct:
      if (!correct) return {false, "false positive: " + failure};
      if (o.speedup && (*o.speedup < e.min_speedup || *o.speedup > e.max_speedup))
        return {false, fmt::format("correct, but {} is outside [{:g}, {:g}]", speed, e.min_speedup, e.max_speedup)};
      return {true, "correct, " + speed};
    case expectation::no_gain:
      if (!correct) return {true, failure};
      if (!o.speedup) return {false, "correct without a speedup to bound"};
      if (*o.speedup <= e.max_speedup) return {true, fmt::format("correct, {} <= {:g}x", speed, e.max_speedup)};
      return {false, fmt::format("correct, {} > {:g}x", speed, e.max_speedup)};
    case expectation::rejected:
      return {!correct, correct ? "correct (" + speed + ")" : failure};
    case expectation::forbidden:
      return {o.verdict == "forbidden", o.verdict == "forbidden" ? failure : o.verdict + " instead of forbidden"};
  }
  return {false, "?"};
}

}  // namespace pk::bench::testing
