#include "bench/metrics/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace pk::metrics {
namespace {

// std::uniform_int_distribution's algorithm is left to the library, so intervals would differ
// between libstdc++ and libc++; mt19937_64's output is fixed by the standard, and Lemire's
// multiply-shift with rejection maps it to [0, bound) without bias.
int draw(std::mt19937_64& rng, std::uint64_t bound) {
  while (true) {
    unsigned __int128 m = static_cast<unsigned __int128>(rng()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low >= (-bound) % bound) return static_cast<int>(m >> 64);
  }
}

double percentile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

std::optional<interval> bootstrap(int units, const resample_statistic& statistic, const bootstrap_options& options) {
  if (units <= 0 || options.replicates <= 0) return std::nullopt;
  std::mt19937_64 rng(options.seed);
  std::vector<int> indices(static_cast<std::size_t>(units));
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r) {
    for (auto& i : indices) i = draw(rng, static_cast<std::uint64_t>(units));
    if (auto v = statistic(indices)) values.push_back(*v);
  }
  if (values.size() * 2 < static_cast<std::size_t>(options.replicates)) return std::nullopt;
  std::sort(values.begin(), values.end());
  double tail = (1.0 - options.confidence) / 2;
  return interval{percentile(values, tail), percentile(values, 1.0 - tail)};
}

std::optional<interval> bootstrap_mean(std::span<const double> values, const bootstrap_options& options) {
  return bootstrap(
      static_cast<int>(values.size()),
      [&](std::span<const int> idx) -> std::optional<double> {
        double sum = 0;
        for (int i : idx) sum += values[static_cast<std::size_t>(i)];
        return sum / static_cast<double>(idx.size());
      },
      options);
}

}  // namespace pk::metrics
