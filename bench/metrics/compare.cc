#include "bench/metrics/compare.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace pk::metrics {
namespace {

struct paired {
  std::vector<const problem_stats*> a, b;  // same problem at the same index
};

paired common(const run_summary& a, const run_summary& b) {
  paired out;
  for (const auto& pa : a.problems)
    for (const auto& pb : b.problems)
      if (pa.id == pb.id) {
        out.a.push_back(&pa);
        out.b.push_back(&pb);
      }
  return out;
}

// Per-problem value of "pass within budget": pass@k, 0 when the budget buys no sample.
double pass_within(const problem_stats& p, int k, std::optional<std::size_t> fast) {
  if (k == 0) return 0;
  return fast ? p.fast_at(*fast, k) : p.pass_at(k);
}

// Mean over the paired problems of a - b, with the paired bootstrap interval of that difference.
equal_k_row difference(const paired& pr, int k_a, int k_b, std::optional<std::size_t> fast,
                       const bootstrap_options& options) {
  std::vector<double> va, vb, diff;
  for (std::size_t i = 0; i < pr.a.size(); ++i) {
    va.push_back(pass_within(*pr.a[i], k_a, fast));
    vb.push_back(pass_within(*pr.b[i], k_b, fast));
    diff.push_back(va.back() - vb.back());
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  return {k_a, mean(va), mean(vb), bootstrap_mean(diff, options)};
}

int min_samples(const std::vector<const problem_stats*>& problems) {
  int n = problems.front()->samples;
  for (const auto* p : problems) n = std::min(n, p->samples);
  return n;
}

double spend_of(const std::vector<const problem_stats*>& problems, bool dollars, int& episodes) {
  double total = 0;
  episodes = 0;
  for (const auto* p : problems) {
    total += dollars ? p->total.dollars : static_cast<double>(p->total.tokens());
    episodes += p->samples;
  }
  return total;
}

}  // namespace

comparison compare(const run_summary& a, const run_summary& b, const bootstrap_options& options) {
  comparison c;
  auto pr = common(a, b);
  if (pr.a.empty()) {
    c.note = "the two runs have no problem in common";
    return c;
  }
  for (const auto* p : pr.a) c.common_problems.push_back(p->id);
  int n_a = min_samples(pr.a), n_b = min_samples(pr.b);
  c.max_k = std::min(n_a, n_b);
  for (int k = 1; k <= c.max_k; ++k) {
    c.pass.push_back(difference(pr, k, k, std::nullopt, options));
    c.fast1.push_back(difference(pr, k, k, std::size_t{0}, options));
  }

  // Spend in dollars when both runs paid at known prices; else in tokens (local, free or unpriced
  // models); else not at all.
  int episodes_a = 0, episodes_b = 0;
  double dollars_a = spend_of(pr.a, true, episodes_a), dollars_b = spend_of(pr.b, true, episodes_b);
  double tokens_a = spend_of(pr.a, false, episodes_a), tokens_b = spend_of(pr.b, false, episodes_b);
  if (dollars_a > 0 && dollars_b > 0 && a.overall.total.unpriced == 0 && b.overall.total.unpriced == 0) {
    c.spend_unit = "dollars";
    c.spend_per_sample_a = dollars_a / episodes_a;
    c.spend_per_sample_b = dollars_b / episodes_b;
  } else if (tokens_a > 0 && tokens_b > 0) {
    c.spend_unit = "tokens";
    c.spend_per_sample_a = tokens_a / episodes_a;
    c.spend_per_sample_b = tokens_b / episodes_b;
  } else {
    c.note = "equal-spend comparison skipped: one run recorded neither dollars nor tokens";
    return c;
  }

  // Budgets at which one of the runs can afford exactly k samples; the other gets what fits.
  std::set<double> budgets;
  for (int k = 1; k <= n_a; ++k) budgets.insert(k * c.spend_per_sample_a);
  for (int k = 1; k <= n_b; ++k) budgets.insert(k * c.spend_per_sample_b);
  auto affordable = [](double budget, double per_sample) {
    return static_cast<int>(std::floor(budget / per_sample * (1 + 1e-9)));
  };
  for (double budget : budgets) {
    equal_spend_row row;
    row.budget = budget;
    row.k_a = affordable(budget, c.spend_per_sample_a);
    row.k_b = affordable(budget, c.spend_per_sample_b);
    bool have_a = row.k_a <= n_a, have_b = row.k_b <= n_b;
    auto d = difference(pr, std::min(row.k_a, n_a), std::min(row.k_b, n_b), std::nullopt, options);
    if (have_a) row.a = d.a;
    if (have_b) row.b = d.b;
    if (have_a && have_b) row.diff = d.diff;
    c.equal_spend.push_back(row);
  }
  return c;
}

}  // namespace pk::metrics
