#include "bench/eval/eval_report.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "config/enum_names.h"

namespace pk::bench {

using json = nlohmann::json;

namespace {

constexpr std::array<config::enum_name<verdict>, 6> verdict_names = {{
    {verdict::correct, "correct"},
    {verdict::mismatch, "mismatch"},
    {verdict::compile_error, "compile_error"},
    {verdict::runtime_error, "runtime_error"},
    {verdict::timeout, "timeout"},
    {verdict::forbidden, "forbidden"},
}};

constexpr std::array<config::enum_name<forbidden_reason>, 4> forbidden_reason_names = {{
    {forbidden_reason::none, ""},
    {forbidden_reason::multicast, "multicast"},
    {forbidden_reason::tampering, "tampering"},
    {forbidden_reason::background, "background"},
}};

}  // namespace

std::string to_string(verdict v) { return std::string(config::enum_to_string(verdict_names, v)); }

std::string to_string(forbidden_reason r) { return std::string(config::enum_to_string(forbidden_reason_names, r)); }

timing_stats stats_of(std::vector<double> ms) {
  timing_stats s;
  s.calls = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  // Nearest-rank quantiles: q-th of n sorted values.
  auto q = [&](double f) { return ms[static_cast<std::size_t>(std::lround(f * static_cast<double>(ms.size() - 1)))]; };
  s.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  s.p10_ms = q(0.1);
  s.p90_ms = q(0.9);
  return s;
}

namespace {

json stats_json(const std::optional<timing_stats>& s) {
  if (!s) return nullptr;
  return {{"median_ms", s->median_ms}, {"p10_ms", s->p10_ms}, {"p90_ms", s->p90_ms}, {"calls", s->calls}};
}

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string duration(double ms) {
  if (ms < 1) return fmt::format("{:.1f} us", ms * 1e3);
  if (ms < 1e3) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.2f} s", ms / 1e3);
}

std::string stats_text(const timing_stats& s) {
  return fmt::format("{} (p10 {}, p90 {})", duration(s.median_ms), duration(s.p10_ms), duration(s.p90_ms));
}

json interval_json(const std::optional<speedup_interval>& i) {
  if (!i) return nullptr;
  return {{"low", i->low}, {"high", i->high}, {"confidence", i->confidence}, {"pairs", i->pairs}};
}

}  // namespace

std::string speedup_text(double speedup, const std::optional<speedup_interval>& interval) {
  if (!interval) return fmt::format("{:.3f}x", speedup);
  std::string reading;
  if (interval->holds(1.0))
    reading = fmt::format("the same as the reference within ±{:.1f}%",
                          100 * std::max(interval->high - 1, 1 - interval->low));
  else if (interval->low > 1)
    reading = fmt::format("faster than the reference by at least {:.1f}%", 100 * (interval->low - 1));
  else
    reading = fmt::format("slower than the reference by at least {:.1f}%", 100 * (1 - interval->high));
  return fmt::format("{:.3f}x ({:g}% interval {:.3f}-{:.3f} over {} pairs: {})", speedup,
                     100 * interval->confidence, interval->low, interval->high, interval->pairs, reading);
}

json to_json(const eval_report& r) {
  json trials = json::array();
  for (const auto& t : r.trials) {
    json ranks = json::array();
    for (const auto& c : t.ranks)
      ranks.push_back({{"rank", c.rank}, {"ok", c.ok}, {"message", c.message}, {"max_abs_error", c.max_abs_error},
                       {"max_rel_error", c.max_rel_error}, {"mismatches", c.mismatches}});
    trials.push_back({{"trial", t.trial}, {"correct", t.correct}, {"ranks", ranks},
                      {"checked_calls", t.checked_calls}, {"reference", stats_json(t.reference)},
                      {"candidate", stats_json(t.candidate)}, {"speedup", opt(t.speedup)},
                      {"speedup_interval", interval_json(t.interval)},
                      {"timing_flags", t.timing_flags}, {"wall_clock", t.wall_clock}});
  }
  return {{"problem", r.problem},
          {"upstream", r.upstream.empty() ? json(nullptr) : json(r.upstream)},
          {"solution", r.solution},
          {"world", r.world},
          {"device", r.device},
          {"dtype", r.dtype},
          {"trials_requested", r.trials_requested},
          {"verdict", to_string(r.result)},
          {"reason", r.reason == forbidden_reason::none ? json(nullptr) : json(to_string(r.reason))},
          {"correct", r.ok()},
          {"message", r.message},
          {"log", r.log},
          {"trials", trials},
          {"reference", stats_json(r.reference)},
          {"candidate", stats_json(r.candidate)},
          {"speedup", opt(r.speedup)},
          {"speedup_interval", interval_json(r.interval)},
          {"max_abs_error", r.max_abs_error},
          {"max_rel_error", r.max_rel_error},
          {"timing_flags", r.timing_flags},
          {"roofline_ms", opt(r.roofline_ms)},
          {"roofline_limiter", r.roofline_limiter},
          {"roofline_missing", r.roofline_missing},
          {"reference_cached", r.reference_cached},
          {"wall_seconds", r.wall_seconds},
          {"steps", r.steps},
          {"sandbox", r.sandbox}};
}

std::string render_text(const eval_report& r) {
  std::string out = r.upstream.empty() ? "" : fmt::format("upstream: ParallelKernelBench checkout {}\n", r.upstream);
  out += fmt::format("problem {} · world {} · {} · {} · {} trial{} · sandbox {}\n", r.problem, r.world,
                     to_string(r.device), r.dtype, r.trials_requested, r.trials_requested == 1 ? "" : "s",
                     r.sandbox);
  for (const auto& t : r.trials) {
    out += fmt::format("trial {}: {}", t.trial, t.correct ? "correct" : "mismatch");
    if (t.speedup)
      out += fmt::format("  reference {}  candidate {}  speedup {}", duration(t.reference->median_ms),
                         duration(t.candidate->median_ms), speedup_text(*t.speedup, t.interval));
    out += "\n";
    for (const auto& c : t.ranks)
      if (!c.ok) out += fmt::format("  rank {}: {}\n", c.rank, c.message);
  }
  if (!r.log.empty()) out += fmt::format("--- output of the failing rank (tail) ---\n{}\n---\n", r.log);
  out += fmt::format("verdict: {}", to_string(r.result));
  if (r.reason != forbidden_reason::none) out += fmt::format(" ({})", to_string(r.reason));
  if (!r.message.empty()) out += fmt::format(": {}", r.message);
  out += "\n";
  if (r.speedup) {
    out += fmt::format("timing (max over ranks per call, median over {} calls each): reference {}, candidate {}\n",
                       r.candidate->calls, stats_text(*r.reference), stats_text(*r.candidate));
    out += fmt::format("speedup: {}\nmax error: {:.3g} absolute, {:.3g} relative", speedup_text(*r.speedup, r.interval),
                       r.max_abs_error, r.max_rel_error);
    if (r.roofline_ms && *r.roofline_ms > 0)
      out += fmt::format("   roofline bound {} ({}-bound): candidate at {:.0f}% of it", duration(*r.roofline_ms),
                         r.roofline_limiter, 100.0 * *r.roofline_ms / r.candidate->median_ms);
    else if (!r.roofline_missing.empty())
      out += fmt::format("   no roofline bound: {}", r.roofline_missing);
    out += "\n";
  }
  for (const auto& f : r.timing_flags) out += fmt::format("timing check: {}\n", f);
  out += fmt::format("wall time {:.1f} s{}\n", r.wall_seconds,
                     r.reference_cached ? " (reference outputs from the cache)" : "");
  return out;
}

}  // namespace pk::bench
