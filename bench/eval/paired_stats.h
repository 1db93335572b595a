// Distribution-free statistics of paired readings: the judge's timing compares the reference's and
// the candidate's blocks pair by pair, and neither block times nor their ratios are normal (a
// busy host skews them, a stray block lands far out). A median and its interval from order
// statistics assume only that the readings are independent.
#pragma once

#include <cstddef>
#include <vector>

namespace pk::bench {

/// A median with the interval that holds the true median at the given confidence.
struct median_interval {
  double median = 0, low = 0, high = 0;
  std::size_t n = 0;  ///< how many readings

  bool holds(double x) const { return low <= x && x <= high; }
};

/// The median: the middle value, or the mean of the two middle ones; 0 for none.
double median_of(std::vector<double> values);

/// The median of `values` and its sign-test interval: the k-th smallest and the k-th largest
/// value, k the largest order whose exact binomial tail stays within (1 - confidence) / 2. Too
/// few values for that confidence give their whole range; none give all zeros.
median_interval median_with_interval(std::vector<double> values, double confidence);

/// The ratio that the median of `log_ratios` stands for, with its interval: exp of each end.
/// Speedups are read in logs so that 2x faster and 2x slower sit at equal distances from 1.
median_interval median_ratio(const std::vector<double>& log_ratios, double confidence);

}  // namespace pk::bench
