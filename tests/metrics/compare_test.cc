#include "bench/metrics/compare.h"

#include <gtest/gtest.h>

#include "fixture.h"

namespace {

using namespace pk::metrics;
using pk::metrics::testing::fixture_run;

TEST(compare, agent_against_zeroshot_at_equal_k) {
  auto c = compare(fixture_run("agent"), fixture_run("zeroshot"), bootstrap_options{});
  EXPECT_EQ(c.common_problems, (std::vector<int>{1, 2, 13, 27}));
  ASSERT_EQ(c.max_k, 3);
  ASSERT_EQ(c.pass.size(), 3u);
  double agent[] = {0.5, 2.0 / 3.0, 0.75}, zeroshot[] = {0.25, 5.0 / 12.0, 0.5};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(c.pass[k].a, agent[k], 1e-12);
    EXPECT_NEAR(c.pass[k].b, zeroshot[k], 1e-12);
    ASSERT_TRUE(c.pass[k].diff);
    EXPECT_LE(c.pass[k].diff->low, 0.25);
    EXPECT_GE(c.pass[k].diff->high, 0.25);
  }
  EXPECT_NEAR(c.fast1[1].a - c.fast1[1].b, 5.0 / 12.0 - 1.0 / 6.0, 1e-12);
}

TEST(compare, agent_against_zeroshot_at_equal_spend) {
  auto c = compare(fixture_run("agent"), fixture_run("zeroshot"), bootstrap_options{});
  EXPECT_EQ(c.spend_unit, "dollars");
  EXPECT_NEAR(c.spend_per_sample_a, 0.10, 1e-12);
  EXPECT_NEAR(c.spend_per_sample_b, 0.01, 1e-12);
  // Budgets: zero-shot's 1..3 samples ($0.01..0.03), then the agent's ($0.10..0.30).
  ASSERT_EQ(c.equal_spend.size(), 6u);
  const auto& cheap = c.equal_spend[2];  // $0.03: zero-shot pass@3, the agent cannot afford one episode
  EXPECT_NEAR(cheap.budget, 0.03, 1e-12);
  EXPECT_EQ(cheap.k_a, 0);
  EXPECT_EQ(cheap.k_b, 3);
  EXPECT_NEAR(*cheap.a, 0.0, 1e-12);
  EXPECT_NEAR(*cheap.b, 0.5, 1e-12);
  ASSERT_TRUE(cheap.diff);
  const auto& dear = c.equal_spend[3];  // $0.10: agent pass@1; zero-shot would need 10 samples, it has 3
  EXPECT_EQ(dear.k_a, 1);
  EXPECT_EQ(dear.k_b, 10);
  EXPECT_NEAR(*dear.a, 0.5, 1e-12);
  EXPECT_FALSE(dear.b);
  EXPECT_FALSE(dear.diff);
}

TEST(compare, runs_without_common_problems_say_so) {
  auto a = fixture_run("agent");
  auto b = fixture_run("zeroshot");
  for (auto& p : b.problems) p.id += 1000;
  auto c = compare(a, b, bootstrap_options{});
  EXPECT_TRUE(c.pass.empty());
  EXPECT_EQ(c.note, "the two runs have no problem in common");
}

}  // namespace
