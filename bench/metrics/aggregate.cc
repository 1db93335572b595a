#include "bench/metrics/aggregate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "bench/metrics/pass_at_k.h"

namespace pk::metrics {
namespace {

// A mean over problems with its bootstrap interval.
estimate mean_estimate(const std::vector<double>& per_problem, const bootstrap_options& options) {
  estimate e;
  e.value = std::accumulate(per_problem.begin(), per_problem.end(), 0.0) / static_cast<double>(per_problem.size());
  e.ci = bootstrap_mean(per_problem, options);
  return e;
}

}  // namespace

spend& spend::operator+=(const spend& o) {
  tokens_in += o.tokens_in;
  tokens_out += o.tokens_out;
  dollars += o.dollars;
  unpriced += o.unpriced;
  gpu_seconds += o.gpu_seconds;
  wall_seconds += o.wall_seconds;
  return *this;
}

bool is_fast(const episode_result& r, double p) {
  if (!r.correct || !r.speedup) return false;
  return *r.speedup > std::max(p, 1.0 + r.noise.value_or(0.0));
}

double problem_stats::pass_at(int k) const { return pass_at_k(samples, correct, k); }

double problem_stats::fast_at(std::size_t p, int k) const { return pass_at_k(samples, fast.at(p), k); }

std::optional<double> problem_stats::geomean_speedup() const {
  if (speedups.empty()) return std::nullopt;
  double log_sum = 0;
  for (double s : speedups) log_sum += std::log(s);
  return std::exp(log_sum / static_cast<double>(speedups.size()));
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  auto n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<double> problem_stats::median_noise() const { return median(noises); }

std::string verdict_with_reason(const episode_result& r) {
  return r.forbidden_reason.empty() ? r.verdict : fmt::format("{} ({})", r.verdict, r.forbidden_reason);
}

int run_summary::forbidden_total() const {
  int n = 0;
  for (const auto& [reason, count] : forbidden) n += count;
  return n;
}

std::vector<problem_stats> problem_statistics(std::span<const episode_result> results) {
  std::map<int, problem_stats> by_id;
  for (const auto& r : results) {
    if (r.run_id != results.front().run_id)
      throw std::invalid_argument(fmt::format("results of runs {} and {} mixed in one summary", results.front().run_id,
                                              r.run_id));
    auto [it, fresh] = by_id.try_emplace(r.problem_id);
    auto& p = it->second;
    if (fresh) {
      p.id = r.problem_id;
      p.stem = r.stem;
      p.problem_category = r.problem_category;
    } else if (p.stem != r.stem || p.problem_category != r.problem_category) {
      throw std::invalid_argument(fmt::format(
          "run {}: problem {} is recorded both as {} ({}) and as {} ({}); results of different problem sets mixed?",
          r.run_id, r.problem_id, p.stem, to_string(p.problem_category), r.stem, to_string(r.problem_category)));
    }
    ++p.samples;
    ++p.verdicts[verdict_with_reason(r)];
    ++p.end_reasons[r.end_reason];
    if (r.correct) {
      ++p.correct;
      if (r.speedup) {
        p.speedups.push_back(*r.speedup);
        p.noises.push_back(r.noise.value_or(0.0));
      }
      if (auto f = roofline_fraction(r)) p.roofline_fractions.push_back(*f);
    }
    for (std::size_t i = 0; i < fast_thresholds.size(); ++i) p.fast[i] += is_fast(r, fast_thresholds[i]);
    p.total += spend{r.tokens_in, r.tokens_out, r.dollars, r.dollars_known ? 0 : 1, r.gpu_seconds, r.wall_seconds};
  }
  std::vector<problem_stats> out;
  for (auto& [id, p] : by_id) out.push_back(std::move(p));
  return out;
}

group_stats aggregate(std::span<const problem_stats> problems, const bootstrap_options& options) {
  group_stats g;
  g.problems = static_cast<int>(problems.size());
  if (problems.empty()) return g;
  g.min_samples = problems.front().samples;
  int correct_samples = 0;
  std::vector<double> correct_rate;
  std::array<std::vector<double>, fast_thresholds.size()> fast_rate;
  for (const auto& p : problems) {
    g.episodes += p.samples;
    g.min_samples = std::min(g.min_samples, p.samples);
    g.solved += p.correct > 0;
    correct_samples += p.correct;
    correct_rate.push_back(static_cast<double>(p.correct) / p.samples);
    for (std::size_t i = 0; i < fast_thresholds.size(); ++i) {
      g.solved_fast[i] += p.fast[i] > 0;
      fast_rate[i].push_back(static_cast<double>(p.fast[i]) / p.samples);
    }
    g.total += p.total;
    for (const auto& [reason, n] : p.end_reasons) g.end_reasons[reason] += n;
  }
  g.correct = mean_estimate(correct_rate, options);
  for (std::size_t i = 0; i < fast_thresholds.size(); ++i) g.fast[i] = mean_estimate(fast_rate[i], options);

  for (int k = 1; k <= g.min_samples; ++k) {
    std::vector<double> pass;
    std::array<std::vector<double>, fast_thresholds.size()> fast;
    for (const auto& p : problems) {
      pass.push_back(p.pass_at(k));
      for (std::size_t i = 0; i < fast_thresholds.size(); ++i) fast[i].push_back(p.fast_at(i, k));
    }
    g.pass_at_k.push_back(mean_estimate(pass, options));
    for (std::size_t i = 0; i < fast_thresholds.size(); ++i) g.fast_at_k[i].push_back(mean_estimate(fast[i], options));
  }

  // Geometric mean over problems of each problem's geometric mean: a problem with many correct
  // samples does not outweigh one with few.
  std::vector<double> log_speedups;
  for (const auto& p : problems)
    if (auto s = p.geomean_speedup()) log_speedups.push_back(std::log(*s));
  if (!log_speedups.empty()) {
    auto logs = mean_estimate(log_speedups, options);
    estimate e{std::exp(logs.value), std::nullopt};
    if (logs.ci) e.ci = interval{std::exp(logs.ci->low), std::exp(logs.ci->high)};
    g.geomean_speedup = e;
  }

  std::vector<double> fractions;
  for (const auto& p : problems) fractions.insert(fractions.end(), p.roofline_fractions.begin(), p.roofline_fractions.end());
  g.median_roofline_fraction = median(std::move(fractions));

  g.dollars_per_problem = g.total.dollars / g.problems;
  g.tokens_per_problem = static_cast<double>(g.total.tokens()) / g.problems;
  g.gpu_seconds_per_problem = g.total.gpu_seconds / g.problems;
  if (correct_samples > 0) {
    g.dollars_per_success = g.total.dollars / correct_samples;
    g.tokens_per_success = static_cast<double>(g.total.tokens()) / correct_samples;
  }
  return g;
}

std::vector<run_summary> summarize(std::span<const episode_result> results, const bootstrap_options& options) {
  using run_key = std::tuple<std::string, run_mode, std::string>;
  std::vector<run_key> order;
  std::map<run_key, std::vector<episode_result>> runs;
  for (const auto& r : results) {
    run_key key{r.run_id, r.mode, r.model};
    auto [it, fresh] = runs.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(r);
  }
  std::vector<run_summary> out;
  for (const auto& key : order) {
    run_summary s;
    std::tie(s.run_id, s.mode, s.model) = key;
    for (const auto& r : runs[key])
      if (r.device) s.devices.insert(*r.device);
    s.problems = problem_statistics(runs[key]);
    s.overall = aggregate(s.problems, options);
    for (category cat : all_categories) {
      std::vector<problem_stats> members;
      for (const auto& p : s.problems)
        if (p.problem_category == cat) members.push_back(p);
      if (!members.empty()) s.categories.emplace_back(cat, aggregate(members, options));
    }
    std::vector<episode_result> ran;
    for (const auto& r : runs[key]) {
      if (is_infrastructure_failure(r)) ++s.infrastructure_failures;
      else ran.push_back(r);
      if (r.verdict == forbidden_verdict) ++s.forbidden[r.forbidden_reason.empty() ? "unspecified" : r.forbidden_reason];
    }
    if (s.infrastructure_failures > 0 && !ran.empty()) {
      const auto stats = problem_statistics(ran);
      s.without_infrastructure = aggregate(stats, options);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace pk::metrics
