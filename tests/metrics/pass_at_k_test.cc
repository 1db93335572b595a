#include "bench/metrics/pass_at_k.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace {

using pk::metrics::pass_at_k;
using u128 = unsigned __int128;

// C(n, k) exactly: each partial product r * (n - i) / (i + 1) is itself a binomial, so the
// division is exact; C(120, 60) ~ 9.7e34 fits in 128 bits.
u128 binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  u128 r = 1;
  for (int i = 0; i < k; ++i) r = r * static_cast<u128>(n - i) / static_cast<u128>(i + 1);
  return r;
}

long double closed_form(int n, int c, int k) {
  return 1.0L - static_cast<long double>(binomial(n - c, k)) / static_cast<long double>(binomial(n, k));
}

TEST(pass_at_k, matches_the_closed_form_with_exact_binomials) {
  int checked = 0;
  for (int n = 1; n <= 120; n += (n < 40 ? 1 : 7))
    for (int c = 0; c <= n; ++c)
      for (int k = 1; k <= n; ++k) {
        ASSERT_NEAR(pass_at_k(n, c, k), static_cast<double>(closed_form(n, c, k)), 1e-12)
            << "n=" << n << " c=" << c << " k=" << k;
        ++checked;
      }
  EXPECT_GT(checked, 100000);
}

TEST(pass_at_k, edge_values) {
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 10, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 3, 1), 0.3);        // pass@1 is the plain rate
  EXPECT_DOUBLE_EQ(pass_at_k(10, 1, 10), 1.0);       // all samples drawn
  EXPECT_DOUBLE_EQ(pass_at_k(3, 1, 2), 2.0 / 3.0);
  // Large n, where C(n, k) overflows every integer type, stays finite and right.
  EXPECT_NEAR(pass_at_k(100000, 1, 1), 1e-5, 1e-5 * 1e-13);  // full relative precision
  EXPECT_NEAR(pass_at_k(100000, 50000, 2), 1.0 - (50000.0 / 100000.0) * (49999.0 / 99999.0), 1e-10);
}

TEST(pass_at_k, grows_with_k_and_with_c) {
  for (int c = 0; c <= 20; ++c)
    for (int k = 1; k < 20; ++k) EXPECT_LE(pass_at_k(20, c, k), pass_at_k(20, c, k + 1));
  for (int c = 0; c < 20; ++c) EXPECT_LE(pass_at_k(20, c, 5), pass_at_k(20, c + 1, 5));
}

TEST(pass_at_k, refuses_impossible_arguments) {
  EXPECT_THROW(pass_at_k(0, 0, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, 6, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, -1, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, 2, 0), std::invalid_argument);
  EXPECT_THROW(pass_at_k(5, 2, 6), std::invalid_argument);
}

}  // namespace
