#include "bench/eval/paired_stats.h"

#include <algorithm>
#include <cmath>

namespace pk::bench {

namespace {

// P(X = i) for X ~ Binomial(n, 1/2), in logs: n reaches a few thousand readings.
double binomial_half_pmf(std::size_t n, std::size_t i) {
  const double dn = static_cast<double>(n), di = static_cast<double>(i);
  return std::exp(std::lgamma(dn + 1) - std::lgamma(di + 1) - std::lgamma(dn - di + 1) - dn * std::log(2.0));
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

median_interval median_with_interval(std::vector<double> values, double confidence) {
  median_interval m;
  m.n = values.size();
  if (values.empty()) return m;
  std::sort(values.begin(), values.end());
  m.median = median_of_sorted(values);
  const std::size_t n = values.size();
  const double tail = (1 - confidence) / 2;
  // The interval [x(k), x(n+1-k)] (1-based) misses the median with probability 2 P(X <= k-1):
  // k grows while P(X <= k) stays within the tail.
  std::size_t k = 0;
  for (double below = binomial_half_pmf(n, 0); k + 1 <= n / 2 && below <= tail; below += binomial_half_pmf(n, k))
    ++k;
  if (k == 0) {
    m.low = values.front();
    m.high = values.back();
  } else {
    m.low = values[k - 1];
    m.high = values[n - k];
  }
  return m;
}

median_interval median_ratio(const std::vector<double>& log_ratios, double confidence) {
  median_interval m = median_with_interval(log_ratios, confidence);
  if (m.n == 0) return m;
  m.median = std::exp(m.median);
  m.low = std::exp(m.low);
  m.high = std::exp(m.high);
  return m;
}

}  // namespace pk::bench
