// Percentile bootstrap intervals over problems (the unit of sampling in a benchmark run).
// Seeded and portable: the same seed gives the same interval on every machine and libstdc++.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

namespace pk::metrics {

struct interval {
  double low = 0;
  double high = 0;
};

struct bootstrap_options {
  int replicates = 2000;
  std::uint64_t seed = 20261130;
  double confidence = 0.95;
};

/// A statistic of a resample: `indices` lists `units` unit indices drawn with replacement; it
/// returns nullopt when undefined on that resample (e.g. a geometric mean with no correct solution).
using resample_statistic = std::function<std::optional<double>(std::span<const int> indices)>;

/// The central `confidence` percentile interval of `statistic` over `options.replicates`
/// resamples of `units` units; nullopt when units == 0 or the statistic is undefined on more than
/// half of the resamples.
std::optional<interval> bootstrap(int units, const resample_statistic& statistic, const bootstrap_options& options);

/// Shorthand: interval of the mean of `values` (one value per unit).
std::optional<interval> bootstrap_mean(std::span<const double> values, const bootstrap_options& options);

}  // namespace pk::metrics
