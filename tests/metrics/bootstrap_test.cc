#include "bench/metrics/bootstrap.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace pk::metrics;

TEST(bootstrap, same_seed_same_interval_other_seed_other_interval) {
  std::vector<double> v = {0, 1, 1, 0, 1, 0.5, 0.25, 1, 0, 0.75};
  bootstrap_options o;
  auto a = bootstrap_mean(v, o), b = bootstrap_mean(v, o);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  o.seed = 7;
  auto c = bootstrap_mean(v, o);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->low != a->low || c->high != a->high);
}

TEST(bootstrap, interval_brackets_the_mean_and_has_the_normal_width) {
  // 200 units of 0/1 with mean 0.3: the 95% interval of the mean is about 0.3 +- 1.96 * sqrt(.21/200).
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back(i % 10 < 3 ? 1.0 : 0.0);
  auto ci = bootstrap_mean(v, bootstrap_options{});
  ASSERT_TRUE(ci);
  double half = 1.96 * std::sqrt(0.21 / 200);
  EXPECT_NEAR(ci->low, 0.3 - half, 0.015);
  EXPECT_NEAR(ci->high, 0.3 + half, 0.015);
}

TEST(bootstrap, constant_values_give_a_point_and_no_units_give_nothing) {
  std::vector<double> v(17, 0.4);
  auto ci = bootstrap_mean(v, bootstrap_options{});
  ASSERT_TRUE(ci);
  EXPECT_DOUBLE_EQ(ci->low, 0.4);
  EXPECT_DOUBLE_EQ(ci->high, 0.4);
  EXPECT_FALSE(bootstrap_mean(std::vector<double>{}, bootstrap_options{}));
}

TEST(bootstrap, mostly_undefined_statistic_has_no_interval) {
  auto never = [](std::span<const int>) -> std::optional<double> { return std::nullopt; };
  EXPECT_FALSE(bootstrap(5, never, bootstrap_options{}));
}

}  // namespace
