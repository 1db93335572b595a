#include "bench/report/document.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/metrics/compare.h"
#include "bench/report/format.h"

namespace pk::report {
namespace {

using metrics::fast_thresholds;
using metrics::group_stats;
using metrics::problem_stats;

const char* const fast_names[] = {"fast_1", "fast_1.5", "fast_2"};

block paragraph(std::string text) { return {block::kind::paragraph, std::move(text), {}, {}}; }

block table_block(table t) {
  if (t.numeric.size() < t.header.size()) t.numeric.resize(t.header.size(), true);
  return {block::kind::table, {}, std::move(t), {}};
}

// What a run leased, by device: GPUs on cuda; on cpu, evaluation slots stand in for GPUs and
// are never called GPUs. Version-1 results do not say which, and a mixed run leased both.
std::string lease_unit(const std::set<bench::device_kind>& devices) {
  if (devices.size() != 1) return "lease-s";
  return *devices.begin() == bench::device_kind::cuda ? "GPU-s" : "CPU slot-s";
}

// The lease unit every run shares, or "" when they differ (then each cell names its own).
std::string common_lease_unit(const run_set& set) {
  std::string unit;
  for (const auto& r : set.runs) {
    const auto u = lease_unit(r.summary.devices);
    if (!unit.empty() && u != unit) return "";
    unit = u;
  }
  return unit;
}

std::string leased_header(const run_set& set) {
  const auto unit = common_lease_unit(set);
  return unit.empty() ? "leased" : unit;
}

std::string leased_cell(const run_set& set, const report_run& r, double seconds) {
  return common_lease_unit(set).empty() ? fmt::format("{:.1f} {}", seconds, lease_unit(r.summary.devices))
                                        : fmt::format("{:.1f}", seconds);
}

// Dollars when every episode's model had prices; "unknown" (not "$0") when none had.
std::string dollars_cell(double amount, const metrics::spend& s, int episodes) {
  if (s.unpriced == 0) return dollars(amount);
  if (s.unpriced >= episodes) return "unknown";
  return fmt::format("{} + {} unpriced", dollars(amount), s.unpriced);
}

std::string bound_fraction_cell(const std::optional<double>& f) { return f ? percent(*f) : std::string("—"); }

std::string device_cell(const std::set<bench::device_kind>& devices) {
  if (devices.empty()) return "not recorded";
  if (devices.size() > 1) return "mixed";
  return *devices.begin() == bench::device_kind::cuda ? "cuda (GPUs)" : "cpu (gloo)";
}

int max_samples(const run_set& set) {
  int n = 0;
  for (const auto& r : set.runs) n = std::max(n, r.summary.overall.min_samples);
  return n;
}

// One column per run, one row per metric.
table overall_table(const run_set& set) {
  table t;
  t.header.push_back("metric");
  for (const auto& r : set.runs) t.header.push_back(r.label);
  t.numeric.assign(t.header.size(), true);
  t.numeric[0] = false;
  auto row = [&](std::string name, auto cell) {
    std::vector<std::string> cells{std::move(name)};
    for (const auto& r : set.runs) cells.push_back(cell(r.summary.overall));
    t.rows.push_back(std::move(cells));
  };
  auto run_row = [&](std::string name, auto cell) {  // a cell that needs the run, not only its numbers
    std::vector<std::string> cells{std::move(name)};
    for (const auto& r : set.runs) cells.push_back(cell(r));
    t.rows.push_back(std::move(cells));
  };
  row("problems solved (any sample correct)", [](const group_stats& g) { return fraction(g.solved, g.problems); });
  row("problems with a fast_1 sample", [](const group_stats& g) { return fraction(g.solved_fast[0], g.problems); });
  row("correct (per sample)", [](const group_stats& g) { return percent(g.correct); });
  for (std::size_t i = 0; i < fast_thresholds.size(); ++i)
    row(fast_names[i], [i](const group_stats& g) { return percent(g.fast[i]); });
  const int n = max_samples(set);
  for (int k = 1; k <= n; ++k)
    row(fmt::format("pass@{}", k), [k](const group_stats& g) {
      return k <= g.min_samples ? percent(g.pass_at_k[k - 1]) : std::string("—");
    });
  for (int k = 1; k <= n; ++k)
    row(fmt::format("fast_1@{}", k), [k](const group_stats& g) {
      return k <= g.min_samples ? percent(g.fast_at_k[0][k - 1]) : std::string("—");
    });
  // Episodes the infrastructure could not run (a lost node, a harness error) count as failures above;
  // these rows give the rates without them, so neither reading hides the other.
  bool any_infrastructure = false;
  for (const auto& r : set.runs) any_infrastructure |= r.summary.infrastructure_failures > 0;
  if (any_infrastructure) {
    auto excluded = [&](std::string name, auto cell) {
      std::vector<std::string> cells{std::move(name)};
      for (const auto& r : set.runs) {
        const auto& s = r.summary;
        cells.push_back(s.infrastructure_failures == 0 ? cell(s.overall)
                        : s.without_infrastructure      ? cell(*s.without_infrastructure)
                                                        : std::string("—"));
      }
      t.rows.push_back(std::move(cells));
    };
    std::vector<std::string> failures{"infrastructure failures (episodes not run; counted as failures above)"};
    for (const auto& r : set.runs) failures.push_back(std::to_string(r.summary.infrastructure_failures));
    t.rows.push_back(std::move(failures));
    excluded("correct (per sample), infrastructure failures excluded",
             [](const group_stats& g) { return percent(g.correct); });
    for (int k = 1; k <= n; ++k)
      excluded(fmt::format("pass@{}, infrastructure failures excluded", k), [k](const group_stats& g) {
        return k <= g.min_samples ? percent(g.pass_at_k[k - 1]) : std::string("—");
      });
  }
  // Reward hacks the judge caught (verdict forbidden), by reason: shown for every run, so that a
  // clean zero is visible too.
  run_row("forbidden verdicts (hacks the judge caught)",
          [](const report_run& r) { return std::to_string(r.summary.forbidden_total()); });
  std::set<std::string> reasons;
  for (const auto& r : set.runs)
    for (const auto& [reason, count] : r.summary.forbidden) reasons.insert(reason);
  for (const auto& reason : reasons)
    run_row("forbidden: " + reason, [&reason](const report_run& r) {
      const auto it = r.summary.forbidden.find(reason);
      return std::to_string(it == r.summary.forbidden.end() ? 0 : it->second);
    });
  row("geomean speedup (correct)",
      [](const group_stats& g) { return g.geomean_speedup ? speedup(*g.geomean_speedup) : std::string("—"); });
  row("fraction of roofline bound (median, correct)",
      [](const group_stats& g) { return bound_fraction_cell(g.median_roofline_fraction); });
  row("episodes ended by (end reasons)", [](const group_stats& g) { return counts(g.end_reasons); });
  row("tokens per problem", [](const group_stats& g) { return tokens(g.tokens_per_problem); });
  row("tokens per success",
      [](const group_stats& g) { return g.tokens_per_success ? tokens(*g.tokens_per_success) : std::string("—"); });
  row("dollars per problem",
      [](const group_stats& g) { return dollars_cell(g.dollars_per_problem, g.total, g.episodes); });
  row("dollars per success", [](const group_stats& g) {
    return g.dollars_per_success ? dollars_cell(*g.dollars_per_success, g.total, g.episodes) : std::string("—");
  });
  row("dollars in all", [](const group_stats& g) { return dollars_cell(g.total.dollars, g.total, g.episodes); });
  run_row("leased (per problem)", [](const report_run& r) {
    const auto& g = r.summary.overall;
    return fmt::format("{:.1f} {} ({:.1f})", g.total.gpu_seconds, lease_unit(r.summary.devices),
                       g.gpu_seconds_per_problem);
  });
  row("wall time in all (episodes with final scoring)",
      [](const group_stats& g) { return seconds(g.total.wall_seconds); });
  return t;
}

std::string rates_at_k(const std::vector<metrics::estimate>& values) {
  std::string out;
  for (const auto& e : values) out += (out.empty() ? "" : " · ") + percent(e.value);
  return out.empty() ? "—" : out;
}

std::vector<block> comparison_blocks(const report_run& a, const report_run& b, const metrics::comparison& c) {
  std::vector<block> blocks;
  if (c.common_problems.empty()) {
    blocks.push_back(paragraph(c.note + "."));
    return blocks;
  }
  blocks.push_back(paragraph(fmt::format(
      "On the {} problem(s) both runs attempted. Δ is {} minus {} in percentage points, with its 95% paired "
      "bootstrap interval over problems.",
      c.common_problems.size(), a.label, b.label)));
  table k;
  k.header = {"k", "pass@k " + a.label, "pass@k " + b.label, "Δ pass@k", "fast_1@k " + a.label,
              "fast_1@k " + b.label, "Δ fast_1@k"};
  for (std::size_t i = 0; i < c.pass.size(); ++i)
    k.rows.push_back({std::to_string(c.pass[i].k), percent(c.pass[i].a), percent(c.pass[i].b),
                      points(c.pass[i].a - c.pass[i].b, c.pass[i].diff), percent(c.fast1[i].a),
                      percent(c.fast1[i].b), points(c.fast1[i].a - c.fast1[i].b, c.fast1[i].diff)});
  blocks.push_back(paragraph("**At equal k** (the same number of samples per problem):"));
  blocks.push_back(table_block(std::move(k)));

  if (c.spend_unit.empty()) {
    blocks.push_back(paragraph("**At equal spend**: " + c.note + "."));
    return blocks;
  }
  blocks.push_back(paragraph(fmt::format(
      "**At equal spend** ({}): an episode costs {} on average for {} and {} for {}. A budget per problem buys "
      "each run as many samples as it affords (k); pass@k is 0 when it affords none, and \"—\" where the run has "
      "fewer samples than the budget buys.",
      c.spend_unit, spend(c.spend_per_sample_a, c.spend_unit), a.label, spend(c.spend_per_sample_b, c.spend_unit),
      b.label)));
  table s;
  s.header = {"budget per problem", "k " + a.label, "pass@k " + a.label, "k " + b.label, "pass@k " + b.label, "Δ"};
  auto opt_percent = [](const std::optional<double>& v) { return v ? percent(*v) : std::string("—"); };
  for (const auto& row : c.equal_spend)
    s.rows.push_back({spend(row.budget, c.spend_unit), std::to_string(row.k_a), opt_percent(row.a),
                      std::to_string(row.k_b), opt_percent(row.b),
                      row.a && row.b ? points(*row.a - *row.b, row.diff) : std::string("—")});
  blocks.push_back(table_block(std::move(s)));
  return blocks;
}

table category_table(const run_set& set, metrics::category cat) {
  table t;
  t.header = {"run",      "problems",        "solved",         "correct",       "fast_1",
              "fast_1.5", "fast_2",          "pass@k (k = 1, 2, ...)", "fast_1@k", "geomean speedup",
              "bound fraction (median)", "$ per problem", "$ per success", leased_header(set)};
  t.numeric.assign(t.header.size(), true);
  t.numeric[0] = false;
  for (const auto& r : set.runs)
    for (const auto& [c, g] : r.summary.categories) {
      if (c != cat) continue;
      t.rows.push_back({r.label, std::to_string(g.problems), fraction(g.solved, g.problems), percent(g.correct),
                        percent(g.fast[0]), percent(g.fast[1]), percent(g.fast[2]), rates_at_k(g.pass_at_k),
                        rates_at_k(g.fast_at_k[0]), g.geomean_speedup ? speedup(*g.geomean_speedup) : "—",
                        bound_fraction_cell(g.median_roofline_fraction),
                        dollars_cell(g.dollars_per_problem, g.total, g.episodes),
                        g.dollars_per_success ? dollars_cell(*g.dollars_per_success, g.total, g.episodes) : "—",
                        leased_cell(set, r, g.total.gpu_seconds)});
    }
  return t;
}

std::string per_problem_rates(const problem_stats& p, std::optional<std::size_t> fast) {
  std::string out;
  for (int k = 1; k <= p.samples; ++k)
    out += (out.empty() ? "" : " · ") + percent(fast ? p.fast_at(*fast, k) : p.pass_at(k));
  return out;
}

table problem_table(const run_set& set) {
  table t;
  // fast_1, fast_1.5 and fast_2 share a column, so that the table fits a page.
  t.header = {"problem", "category", "run", "samples", "correct", "fast_1 · fast_1.5 · fast_2",
              "pass@k (k = 1, 2, ...)", "fast_1@k", "geomean speedup", "bound fraction (median)", "noise (median)",
              "verdicts", "end reasons", "tokens", "$", "$ per success", leased_header(set)};
  t.numeric.assign(t.header.size(), true);
  for (int i : {0, 1, 2, 11, 12}) t.numeric[static_cast<std::size_t>(i)] = false;
  std::map<int, std::vector<std::pair<const report_run*, const problem_stats*>>> by_problem;
  for (const auto& r : set.runs)
    for (const auto& p : r.summary.problems) by_problem[p.id].emplace_back(&r, &p);
  for (const auto& [id, entries] : by_problem)
    for (const auto& [run, p] : entries) {
      auto rate = [&](int count) { return fmt::format("{}/{}", count, p->samples); };
      auto noise = p->median_noise();
      auto geo = p->geomean_speedup();
      t.rows.push_back({fmt::format("{}_{}", p->id, p->stem), std::string(metrics::to_string(p->problem_category)),
                        run->label, std::to_string(p->samples), rate(p->correct),
                        fmt::format("{} · {} · {}", rate(p->fast[0]), rate(p->fast[1]), rate(p->fast[2])),
                        per_problem_rates(*p, std::nullopt), per_problem_rates(*p, 0),
                        geo ? speedup(*geo) : "—", bound_fraction_cell(metrics::median(p->roofline_fractions)),
                        noise ? fmt::format("±{:.1f}%", 100 * *noise) : "—", counts(p->verdicts), counts(p->end_reasons),
                        tokens(static_cast<double>(p->total.tokens())),
                        dollars_cell(p->total.dollars, p->total, p->samples),
                        p->correct ? dollars_cell(p->total.dollars / p->correct, p->total, p->samples) : "—",
                        leased_cell(set, *run, p->total.gpu_seconds)});
    }
  return t;
}

}  // namespace

std::string category_title(metrics::category cat) {
  switch (cat) {
    case metrics::category::primitive: return "Primitive collectives";
    case metrics::category::gemm_comm: return "GEMM + communication";
    case metrics::category::fused: return "Fused compute + communication";
    case metrics::category::moe: return "Mixture of experts";
    case metrics::category::sequence_parallel: return "Sequence parallel";
    case metrics::category::optimizer: return "Optimizer / sharded training";
    case metrics::category::domain: return "Domain applications";
    case metrics::category::upstream: return "ParallelKernelBench checkout (upstream mode)";
  }
  return std::string(metrics::to_string(cat));
}

document build_document(const run_set& set) {
  document doc;
  doc.title = "pkagent report";

  std::set<int> problems;
  int episodes = 0;
  for (const auto& r : set.runs) {
    episodes += r.summary.overall.episodes;
    for (const auto& p : r.summary.problems) problems.insert(p.id);
  }
  section intro{2, "Runs", {}};
  intro.blocks.push_back(paragraph(fmt::format(
      "{} run(s), {} problem(s), {} episode(s). Rates are means over problems (each problem counts once); "
      "[a, b] is a 95% bootstrap interval over problems ({} resamples, seed {}). A correct solution is fast_p "
      "when its speedup exceeds both p and 1 + its measured timing noise. pass@k and fast_p@k use the unbiased "
      "estimator over each problem's samples. The bound fraction is the problem's roofline time on the run's "
      "hardware spec over the solution's time (100% = at the bound; GPU runs only). Leases are world size x "
      "seconds: GPU-s on GPUs; on a CPU run evaluation slots stand in for GPUs (CPU slot-s).",
      set.runs.size(), problems.size(), episodes, set.bootstrap.replicates, set.bootstrap.seed)));
  table runs;
  runs.header = {"run", "mode", "model", "device", "run id", "problems", "samples per problem", "episodes", "results"};
  runs.numeric = {false, false, false, false, false, true, true, true, false};
  for (const auto& r : set.runs) {
    const auto& g = r.summary.overall;
    int most = 0;
    for (const auto& p : r.summary.problems) most = std::max(most, p.samples);
    runs.rows.push_back({r.label, std::string(metrics::to_string(r.summary.mode)), r.summary.model,
                         device_cell(r.summary.devices), r.summary.run_id,
                         std::to_string(g.problems),
                         g.min_samples == most ? std::to_string(most) : fmt::format("{}–{}", g.min_samples, most),
                         std::to_string(g.episodes), r.dir.string()});
  }
  intro.blocks.push_back(table_block(std::move(runs)));
  doc.sections.push_back(std::move(intro));

  section overall{2, "Overall", {}};
  overall.blocks.push_back(table_block(overall_table(set)));
  doc.sections.push_back(std::move(overall));

  for (auto [a, b] : set.comparisons) {
    const auto& ra = set.runs[a];
    const auto& rb = set.runs[b];
    section s{2, fmt::format("{} against {}", ra.label, rb.label), {}};
    s.blocks = comparison_blocks(ra, rb, metrics::compare(ra.summary, rb.summary, set.bootstrap));
    doc.sections.push_back(std::move(s));
  }

  section cats{2, "By category", {}};
  doc.sections.push_back(std::move(cats));
  for (auto cat : metrics::all_categories) {
    auto t = category_table(set, cat);
    if (t.rows.empty()) continue;
    section s{3, fmt::format("{} ({})", category_title(cat), metrics::to_string(cat)), {}};
    s.blocks.push_back(table_block(std::move(t)));
    doc.sections.push_back(std::move(s));
  }

  section per_problem{2, "Per problem", {}};
  per_problem.blocks.push_back(table_block(problem_table(set)));
  doc.sections.push_back(std::move(per_problem));

  if (!set.skipped.empty()) {
    section skipped{2, "Skipped lines", {}};
    skipped.blocks.push_back(paragraph(
        fmt::format("{} line(s) of the results files did not match the format (docs/results.md) and were left out:",
                    set.skipped.size())));
    block list{block::kind::list, {}, {}, {}};
    for (const auto& s : set.skipped) list.items.push_back(metrics::describe(s));
    skipped.blocks.push_back(std::move(list));
    doc.sections.push_back(std::move(skipped));
  }
  return doc;
}

}  // namespace pk::report
