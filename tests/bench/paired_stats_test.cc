// The sign-test interval of a median: its order statistics, and that it holds the true median as
// often as it claims.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "bench/eval/paired_stats.h"

namespace pk::bench {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = n; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  return v;
}

TEST(paired_stats, the_interval_is_the_sign_tests_order_statistics) {
  // n = 80 at 99%: P(X <= 28) = 0.0048 <= 0.005 < P(X <= 29) = 0.0092 for X ~ Bin(80, 1/2).
  const median_interval m = median_with_interval(one_to(80), 0.99);
  EXPECT_DOUBLE_EQ(m.median, 40.5);
  EXPECT_DOUBLE_EQ(m.low, 29);
  EXPECT_DOUBLE_EQ(m.high, 52);
  EXPECT_EQ(m.n, 80u);
  // n = 10 at 95%: P(X <= 1) = 0.0107 <= 0.025 < P(X <= 2) = 0.0547.
  const median_interval t = median_with_interval(one_to(10), 0.95);
  EXPECT_DOUBLE_EQ(t.low, 2);
  EXPECT_DOUBLE_EQ(t.high, 9);
  EXPECT_DOUBLE_EQ(median_with_interval(one_to(9), 0.95).median, 5);
}

TEST(paired_stats, too_few_values_give_their_range_and_none_give_zeros) {
  // Five values cannot reach 99% (the widest interval misses with 2/32): their whole range.
  const median_interval m = median_with_interval({3, 1, 2, 5, 4}, 0.99);
  EXPECT_DOUBLE_EQ(m.low, 1);
  EXPECT_DOUBLE_EQ(m.high, 5);
  EXPECT_DOUBLE_EQ(m.median, 3);
  const median_interval none = median_with_interval({}, 0.99);
  EXPECT_EQ(none.n, 0u);
  EXPECT_DOUBLE_EQ(none.low, 0);
  EXPECT_DOUBLE_EQ(none.high, 0);
}

TEST(paired_stats, the_interval_holds_the_true_median_as_often_as_it_claims) {
  // Skewed readings (lognormal, true median 1): at 95% over 2000 samples of 40 the interval
  // [x(14), x(27)] misses 3.8% of the time (the sign test is conservative); an interval far too
  // wide would miss far less, one too narrow more.
  std::mt19937 gen(7);
  std::lognormal_distribution<double> d(0.0, 0.5);
  int missed = 0;
  const int samples = 2000;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> v(40);
    for (double& x : v) x = d(gen);
    if (!median_with_interval(v, 0.95).holds(1.0)) ++missed;
  }
  const double rate = static_cast<double>(missed) / samples;
  EXPECT_LE(rate, 0.06);
  EXPECT_GE(rate, 0.015);
}

}  // namespace
}  // namespace pk::bench
