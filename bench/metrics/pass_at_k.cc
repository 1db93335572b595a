#include "bench/metrics/pass_at_k.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::metrics {

double pass_at_k(int n, int c, int k) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument(fmt::format("pass@k needs 0 <= c <= n and 1 <= k <= n, got n={} c={} k={}", n, c, k));
  if (c == 0) return 0.0;
  if (n - c < k) return 1.0;  // every choice of k samples includes a passing one
  // Summing logs and finishing with expm1 keeps full relative precision when pass@k is tiny
  // (1 - product would cancel: pass@1 of 1 in 100000 would lose six digits).
  double log_all_fail = 0.0;
  for (int i = n - c + 1; i <= n; ++i) log_all_fail += std::log1p(-static_cast<double>(k) / i);
  return -std::expm1(log_all_fail);
}

}  // namespace pk::metrics
