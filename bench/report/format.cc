#include "bench/report/format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace pk::report {

std::string percent(double rate) { return fmt::format("{:.1f}%", 100 * rate); }

std::string percent(const metrics::estimate& e) {
  if (!e.ci) return percent(e.value);
  return fmt::format("{:.1f}% [{:.1f}, {:.1f}]", 100 * e.value, 100 * e.ci->low, 100 * e.ci->high);
}

std::string points(double diff) { return fmt::format("{:+.1f} pp", 100 * diff); }

std::string points(double diff, const std::optional<metrics::interval>& ci) {
  if (!ci) return points(diff);
  return fmt::format("{:+.1f} pp [{:+.1f}, {:+.1f}]", 100 * diff, 100 * ci->low, 100 * ci->high);
}

std::string speedup(double s) { return fmt::format("{:.2f}x", s); }

std::string speedup(const metrics::estimate& e) {
  if (!e.ci) return speedup(e.value);
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", e.value, e.ci->low, e.ci->high);
}

std::string dollars(double d) {
  if (d == 0) return "$0";
  if (std::fabs(d) < 0.01) return fmt::format("${:.4f}", d);
  if (std::fabs(d) < 1) return fmt::format("${:.3f}", d);
  return fmt::format("${:.2f}", d);
}

std::string tokens(double t) {
  if (t < 1000) return fmt::format("{:.0f}", t);
  if (t < 1e6) return fmt::format("{:.1f}k", t / 1e3);
  return fmt::format("{:.2f}M", t / 1e6);
}

std::string seconds(double s) { return fmt::format("{:.1f} s", s); }

std::string spend(double amount, const std::string& unit) {
  return unit == "dollars" ? dollars(amount) : tokens(amount) + " tokens";
}

std::string fraction(int part, int whole) { return fmt::format("{}/{}", part, whole); }

std::string counts(const std::map<std::string, int>& named) {
  std::vector<std::pair<std::string, int>> sorted(named.begin(), named.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, count] : sorted) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, count);
  return out.empty() ? "—" : out;
}

}  // namespace pk::report
