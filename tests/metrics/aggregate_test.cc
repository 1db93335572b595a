// Checked against values worked out by hand from tests/report/fixture/*/results.jsonl:
//   agent, 3 samples each:  p1 correct 2 (speedups 1.25, 1.02; noise .05 -> fast_1 once),
//     p2 correct 3 (2.5, 1.6, 0.8; noise .1 -> fast_1 twice, fast_1.5 twice, fast_2 once),
//     p13 correct 0, p27 correct 1 (1.1 within its noise .2 -> not fast); $0.10, 12k tokens per sample.
//   zeroshot: p1 correct 1 (1.0), p2 correct 2 (1.3 fast, 1.05 within noise .1), p13 0, p27 0; $0.01.
#include "bench/metrics/aggregate.h"

#include <cmath>

#include <gtest/gtest.h>

#include "fixture.h"
#include "sample_result.h"

namespace {

using namespace pk::metrics;
using pk::metrics::testing::fixture_run;
using pk::metrics::testing::sample_result;

TEST(is_fast, counts_only_speedups_beyond_the_noise) {
  auto r = sample_result();
  r.speedup = 1.04;
  r.noise = 0.05;
  EXPECT_FALSE(is_fast(r, 1.0));  // faster on paper, but within the noise
  r.speedup = 1.06;
  EXPECT_TRUE(is_fast(r, 1.0));
  EXPECT_FALSE(is_fast(r, 1.5));
  r.speedup = 1.55;
  r.noise = 0.6;
  EXPECT_FALSE(is_fast(r, 1.5));  // noise larger than the threshold's margin
  r.noise = 0.0;
  EXPECT_TRUE(is_fast(r, 1.5));
  r.correct = false;
  EXPECT_FALSE(is_fast(r, 1.0));
  r.correct = true;
  r.speedup.reset();
  EXPECT_FALSE(is_fast(r, 1.0));
}

TEST(aggregate, agent_fixture_matches_hand_computed_values) {
  auto run = fixture_run("agent");
  EXPECT_EQ(run.run_id, "agent-fixture");
  EXPECT_EQ(run.mode, run_mode::agent);
  ASSERT_EQ(run.problems.size(), 4u);
  const auto& p1 = run.problems[0];
  EXPECT_EQ(p1.id, 1);
  EXPECT_EQ(p1.samples, 3);
  EXPECT_EQ(p1.correct, 2);
  EXPECT_EQ(p1.fast[0], 1);
  EXPECT_NEAR(*p1.geomean_speedup(), std::sqrt(1.25 * 1.02), 1e-12);
  EXPECT_DOUBLE_EQ(*p1.median_noise(), 0.05);
  EXPECT_EQ(run.problems[1].fast, (std::array<int, 3>{2, 2, 1}));
  EXPECT_FALSE(run.problems[2].geomean_speedup());
  EXPECT_EQ(run.problems[2].verdicts.at("timeout"), 1);

  const auto& g = run.overall;
  EXPECT_EQ(g.problems, 4);
  EXPECT_EQ(g.episodes, 12);
  EXPECT_EQ(g.min_samples, 3);
  EXPECT_EQ(g.solved, 3);
  EXPECT_EQ(g.solved_fast, (std::array<int, 3>{2, 1, 1}));
  EXPECT_NEAR(g.correct.value, 0.5, 1e-12);  // (2/3 + 1 + 0 + 1/3) / 4
  ASSERT_EQ(g.pass_at_k.size(), 3u);
  EXPECT_NEAR(g.pass_at_k[0].value, 0.5, 1e-12);
  EXPECT_NEAR(g.pass_at_k[1].value, 2.0 / 3.0, 1e-12);  // (1 + 1 + 0 + 2/3) / 4
  EXPECT_NEAR(g.pass_at_k[2].value, 0.75, 1e-12);
  EXPECT_NEAR(g.fast[0].value, 0.25, 1e-12);            // (1/3 + 2/3) / 4
  EXPECT_NEAR(g.fast[1].value, 1.0 / 6.0, 1e-12);
  EXPECT_NEAR(g.fast[2].value, 1.0 / 12.0, 1e-12);
  EXPECT_NEAR(g.fast_at_k[0][1].value, 5.0 / 12.0, 1e-12);  // (2/3 + 1) / 4
  EXPECT_NEAR(g.fast_at_k[0][2].value, 0.5, 1e-12);
  ASSERT_TRUE(g.geomean_speedup);
  EXPECT_NEAR(g.geomean_speedup->value, std::cbrt(std::sqrt(1.25 * 1.02) * std::cbrt(2.5 * 1.6 * 0.8) * 1.1), 1e-12);
  EXPECT_NEAR(g.total.dollars, 1.2, 1e-12);
  EXPECT_EQ(g.total.tokens(), 144000);
  EXPECT_NEAR(g.dollars_per_problem, 0.3, 1e-12);
  EXPECT_NEAR(*g.dollars_per_success, 0.2, 1e-12);
  EXPECT_NEAR(*g.tokens_per_success, 24000, 1e-9);
  EXPECT_NEAR(g.total.gpu_seconds, 120, 1e-12);
  EXPECT_EQ(g.total.unpriced, 0);
  EXPECT_EQ(run.devices, std::set<pk::bench::device_kind>{pk::bench::device_kind::cuda});
  // Bounds 0.2 / 0.1 / 0.05 ms (problems 1, 2, 27), every solution 0.5 ms: fractions 0.4, 0.4,
  // 0.2, 0.2, 0.2, 0.1; the median is 0.2.
  EXPECT_EQ(p1.roofline_fractions, (std::vector<double>{0.4, 0.4}));
  ASSERT_TRUE(g.median_roofline_fraction);
  EXPECT_NEAR(*g.median_roofline_fraction, 0.2, 1e-12);

  // Intervals bracket their estimate and stay within the possible range.
  for (const auto& e : g.pass_at_k) {
    ASSERT_TRUE(e.ci);
    EXPECT_LE(e.ci->low, e.value);
    EXPECT_GE(e.ci->high, e.value);
    EXPECT_GE(e.ci->low, 0.0);
    EXPECT_LE(e.ci->high, 1.0);
  }

  ASSERT_EQ(run.categories.size(), 3u);
  EXPECT_EQ(run.categories[0].first, category::primitive);
  EXPECT_NEAR(run.categories[0].second.correct.value, (2.0 / 3.0 + 1.0) / 2, 1e-12);
  EXPECT_EQ(run.categories[1].first, category::gemm_comm);
  EXPECT_EQ(run.categories[2].first, category::moe);
  EXPECT_FALSE(run.categories[1].second.dollars_per_success);
}

TEST(aggregate, zeroshot_fixture_matches_hand_computed_values) {
  auto g = fixture_run("zeroshot").overall;
  EXPECT_NEAR(g.pass_at_k[0].value, 0.25, 1e-12);
  EXPECT_NEAR(g.pass_at_k[1].value, 5.0 / 12.0, 1e-12);
  EXPECT_NEAR(g.pass_at_k[2].value, 0.5, 1e-12);
  EXPECT_NEAR(g.fast[0].value, 1.0 / 12.0, 1e-12);
  EXPECT_NEAR(g.fast_at_k[0][1].value, 1.0 / 6.0, 1e-12);
  EXPECT_NEAR(g.geomean_speedup->value, std::sqrt(std::sqrt(1.3 * 1.05)), 1e-12);  // p1 1.0, p2 sqrt(1.3*1.05)
  EXPECT_NEAR(*g.dollars_per_success, 0.04, 1e-12);
}

TEST(aggregate, pass_at_k_stops_at_the_fewest_samples_and_problems_weigh_the_same) {
  std::vector<episode_result> results;
  for (int s = 0; s < 5; ++s) {
    auto r = sample_result(1, s);
    r.correct = s == 0;
    results.push_back(r);
  }
  for (int s = 0; s < 2; ++s) results.push_back(sample_result(2, s));
  auto g = aggregate(problem_statistics(results), bootstrap_options{});
  EXPECT_EQ(g.min_samples, 2);
  EXPECT_EQ(g.pass_at_k.size(), 2u);
  EXPECT_NEAR(g.correct.value, (0.2 + 1.0) / 2, 1e-12);
}

TEST(aggregate, unknown_prices_are_counted_not_summed_as_zero) {
  std::vector<episode_result> results = {sample_result(1, 0), sample_result(1, 1)};
  results[1].dollars = 0;
  results[1].dollars_known = false;
  const auto g = aggregate(problem_statistics(results), {});
  EXPECT_EQ(g.total.unpriced, 1);
  EXPECT_NEAR(g.total.dollars, 0.012, 1e-12);
}

TEST(aggregate, refuses_a_problem_recorded_two_ways) {
  auto a = sample_result(1, 0), b = sample_result(1, 1);
  b.stem = "allgather";
  std::vector<episode_result> results = {a, b};
  EXPECT_THROW(problem_statistics(results), std::invalid_argument);
}

TEST(summarize, splits_runs_in_order_of_appearance) {
  auto a = sample_result(1, 0), b = sample_result(1, 0);
  b.run_id = "run-2";
  b.mode = run_mode::zeroshot;
  std::vector<episode_result> results = {b, a};
  auto runs = summarize(results, bootstrap_options{});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, "run-2");
  EXPECT_EQ(runs[1].run_id, "run-1");
}

TEST(summarize, counts_infrastructure_failures_as_failures_and_also_without_them) {
  // Problem 1: two correct samples; problem 2: one correct, and one its node lost.
  auto lost = sample_result(2, 1);
  lost.verdict = std::string(infrastructure_verdict);
  lost.correct = false;
  lost.speedup = lost.noise = std::nullopt;
  std::vector<episode_result> results = {sample_result(1, 0), sample_result(1, 1), sample_result(2, 0), lost};
  auto run = summarize(results, bootstrap_options{}).at(0);
  EXPECT_EQ(run.infrastructure_failures, 1);
  EXPECT_DOUBLE_EQ(run.overall.correct.value, (1.0 + 0.5) / 2);
  ASSERT_TRUE(run.without_infrastructure.has_value());
  EXPECT_DOUBLE_EQ(run.without_infrastructure->correct.value, 1.0);
  EXPECT_EQ(run.without_infrastructure->episodes, 3);
  EXPECT_EQ(run.without_infrastructure->min_samples, 1);
  // Without failures there is nothing to leave out.
  results.pop_back();
  EXPECT_FALSE(summarize(results, bootstrap_options{}).at(0).without_infrastructure.has_value());
}

TEST(summarize, counts_forbidden_verdicts_per_run_by_reason) {
  const auto hack = pk::metrics::testing::forbidden_result;
  auto other = sample_result(1, 0);
  other.model = "other";
  std::vector<episode_result> results = {hack(1, 0, "tampering"), hack(1, 1, "tampering"), hack(2, 0, "multicast"),
                                         hack(2, 1, ""), sample_result(3, 0), other};
  const auto runs = summarize(results, bootstrap_options{});
  ASSERT_EQ(runs.size(), 2u);
  const std::map<std::string, int> want = {{"tampering", 2}, {"multicast", 1}, {"unspecified", 1}};
  EXPECT_EQ(runs[0].forbidden, want) << "a result that names no reason (before version 3) is unspecified";
  EXPECT_EQ(runs[0].forbidden_total(), 4);
  EXPECT_DOUBLE_EQ(runs[0].overall.correct.value, 1.0 / 3) << "forbidden verdicts count as failures";
  EXPECT_EQ(runs[0].problems[0].verdicts.at("forbidden (tampering)"), 2);
  EXPECT_EQ(runs[0].problems[1].verdicts.at("forbidden"), 1);
  EXPECT_TRUE(runs[1].forbidden.empty()) << "counted per model: the other model's run has none";
  EXPECT_EQ(runs[1].forbidden_total(), 0);
}

}  // namespace
