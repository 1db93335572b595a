#include "bench/metrics/result.h"

#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/enum_names.h"

namespace pk::metrics {
namespace {

using json = nlohmann::json;

constexpr std::array<config::enum_name<category>, 8> category_names = {{
    {category::primitive, "primitive"},
    {category::gemm_comm, "gemm_comm"},
    {category::fused, "fused"},
    {category::moe, "moe"},
    {category::sequence_parallel, "sequence_parallel"},
    {category::optimizer, "optimizer"},
    {category::domain, "domain"},
    {category::upstream, "upstream"},
}};

constexpr std::array<config::enum_name<run_mode>, 2> mode_names = {{
    {run_mode::agent, "agent"},
    {run_mode::zeroshot, "zeroshot"},
}};

// Field access that names the field in every failure, so a reader's skip message says what to fix.
class fields {
 public:
  fields(const json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {
    if (!object_.is_object()) fail("", fmt::format("must be a JSON object, not {}", object_.type_name()));
  }

  const json& at(std::string_view key) {
    seen_.insert(std::string(key));
    auto it = object_.find(key);
    if (it == object_.end()) fail(key, "missing");
    return *it;
  }
  bool is_null(std::string_view key) { return at(key).is_null(); }

  std::string text(std::string_view key, bool allow_empty = false) {
    const json& v = at(key);
    if (!v.is_string()) fail(key, fmt::format("must be a string, not {}", v.type_name()));
    auto s = v.get<std::string>();
    if (s.empty() && !allow_empty) fail(key, "must not be empty");
    return s;
  }
  // Names the judge and the runner choose (verdicts, end reasons): snake_case so reports can group them.
  std::string name(std::string_view key) {
    auto s = text(key);
    for (char c : s)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
        fail(key, fmt::format("\"{}\" is not a snake_case name ([a-z0-9_]+)", s));
    return s;
  }
  bool boolean(std::string_view key) {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, fmt::format("must be true or false, not {}", v.type_name()));
    return v.get<bool>();
  }
  std::int64_t integer(std::string_view key, std::int64_t min) {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(key, fmt::format("must be an integer, not {}", v.type_name()));
    auto i = v.get<std::int64_t>();
    if (i < min) fail(key, fmt::format("must be >= {}, got {}", min, i));
    return i;
  }
  double number(std::string_view key, bool positive) {
    const json& v = at(key);
    if (!v.is_number()) fail(key, fmt::format("must be a number, not {}", v.type_name()));
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "must be finite");
    if (positive ? d <= 0 : d < 0) fail(key, fmt::format("must be {} 0, got {}", positive ? ">" : ">=", d));
    return d;
  }

  void finish() const {
    for (const auto& [key, value] : object_.items())
      if (!seen_.count(key)) fail(key, "unknown field (a newer format? see docs/results.md)");
  }

  [[noreturn]] void fail(std::string_view key, std::string_view reason) const {
    std::string where = prefix_.empty() ? std::string(key) : key.empty() ? prefix_ : prefix_ + "." + std::string(key);
    throw result_error(where.empty() ? std::string(reason) : fmt::format("{}: {}", where, reason));
  }

 private:
  const json& object_;
  std::string prefix_;
  std::set<std::string, std::less<>> seen_;
};

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::optional<double> roofline_fraction(const episode_result& r) {
  if (!r.correct || !r.timings || !r.roofline_ms) return std::nullopt;
  return *r.roofline_ms / r.timings->solution_ms;
}

std::string_view to_string(run_mode mode) { return config::enum_to_string(mode_names, mode); }

std::string_view to_string(category cat) { return config::enum_to_string(category_names, cat); }

std::optional<run_mode> parse_mode(std::string_view text) { return config::enum_from_string(mode_names, text); }

std::optional<category> parse_category(std::string_view text) { return config::enum_from_string(category_names, text); }

json to_json(const episode_result& r) {
  json timings = nullptr;
  if (r.timings)
    timings = {{"reference_ms", r.timings->reference_ms},
               {"solution_ms", r.timings->solution_ms},
               {"trials", r.timings->trials}};
  // ordered_json would keep this order on disk; plain json sorts keys, which is just as readable.
  return {{"version", results_format_version},
          {"run_id", r.run_id},
          {"mode", to_string(r.mode)},
          {"model", r.model},
          {"problem",
           {{"id", r.problem_id},
            {"stem", r.stem},
            {"category", to_string(r.problem_category)},
            {"world_size", r.world_size}}},
          {"sample", r.sample},
          {"verdict", r.verdict},
          {"forbidden_reason", r.forbidden_reason.empty() ? json(nullptr) : json(r.forbidden_reason)},
          {"correct", r.correct},
          {"speedup", optional_number(r.speedup)},
          {"noise", optional_number(r.noise)},
          {"timing", timings},
          {"tokens", {{"in", r.tokens_in}, {"out", r.tokens_out}}},
          {"dollars", r.dollars_known ? json(r.dollars) : json(nullptr)},
          {"gpu_seconds", r.gpu_seconds},
          {"wall_seconds", r.wall_seconds},
          {"device", r.device ? json(*r.device) : json("")},
          {"roofline_ms", optional_number(r.roofline_ms)},
          {"end_reason", r.end_reason},
          {"transcript", r.transcript}};
}

episode_result result_from_json(const json& object) {
  fields f(object, "");
  auto version = f.integer("version", 1);
  if (version > results_format_version)
    f.fail("version", fmt::format("is {}, this pkagent reads versions 1 to {} (see docs/results.md)", version,
                                  results_format_version));
  episode_result r;
  r.run_id = f.text("run_id");
  auto mode_text = f.text("mode");
  auto mode = parse_mode(mode_text);
  if (!mode) f.fail("mode", fmt::format("\"{}\" is not agent or zeroshot", mode_text));
  r.mode = *mode;
  r.model = f.text("model");

  fields p(f.at("problem"), "problem");
  r.problem_id = static_cast<int>(p.integer("id", 1));
  r.stem = p.name("stem");
  auto cat_text = p.text("category");
  auto cat = parse_category(cat_text);
  if (!cat)
    p.fail("category", fmt::format("\"{}\" is not one of primitive, gemm_comm, fused, moe, sequence_parallel, "
                                   "optimizer, domain, upstream",
                                   cat_text));
  r.problem_category = *cat;
  r.world_size = static_cast<int>(p.integer("world_size", 1));
  p.finish();

  r.sample = static_cast<int>(f.integer("sample", 0));
  r.verdict = f.name("verdict");
  if (version >= 3 && !f.is_null("forbidden_reason")) {
    r.forbidden_reason = f.name("forbidden_reason");
    if (r.verdict != forbidden_verdict)
      f.fail("forbidden_reason", fmt::format("is set, but the verdict is \"{}\", not forbidden", r.verdict));
  }
  r.correct = f.boolean("correct");
  if (!f.is_null("speedup")) r.speedup = f.number("speedup", true);
  if (!f.is_null("noise")) r.noise = f.number("noise", false);
  if (!f.is_null("timing")) {
    fields t(f.at("timing"), "timing");
    r.timings = timing{t.number("reference_ms", true), t.number("solution_ms", true),
                       static_cast<int>(t.integer("trials", 1))};
    t.finish();
  }
  fields tok(f.at("tokens"), "tokens");
  r.tokens_in = tok.integer("in", 0);
  r.tokens_out = tok.integer("out", 0);
  tok.finish();
  r.dollars_known = version < 2 || !f.is_null("dollars");
  if (r.dollars_known) r.dollars = f.number("dollars", false);
  r.gpu_seconds = f.number("gpu_seconds", false);
  r.wall_seconds = f.number("wall_seconds", false);
  if (version >= 2) {
    const bench::device_parse d = bench::parse_device(f.text("device"));
    if (!d.device) f.fail("device", d.error);
    r.device = d.device;
    if (!f.is_null("roofline_ms")) r.roofline_ms = f.number("roofline_ms", true);
  }
  r.end_reason = f.name("end_reason");
  r.transcript = f.text("transcript", true);
  f.finish();
  if (r.correct && r.speedup && !r.noise)
    throw result_error("noise: missing for a timed correct result (fast_1 needs the noise bound)");
  return r;
}

}  // namespace pk::metrics
