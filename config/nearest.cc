// Written here rather than taken from a library: the optimal-string-alignment distance is a
// dozen lines, and no Debian-packaged C++ library we use offers it.
#include "config/nearest.h"

#include <algorithm>
#include <utility>

namespace pk::config {

namespace {

std::size_t distance(std::string_view a, std::string_view b) {
  // d[i][j]: steps from a[0..i) to b[0..j); three rows suffice for the swap step.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + change});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> nearest_all(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t allowed = word.size() <= 4 ? 1 : 2;
  std::vector<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = distance(word, c);
    if (d > best_distance || d >= std::max(word.size(), c.size())) continue;
    if (d < best_distance) best.clear();
    best.push_back(c);
    best_distance = d;
  }
  return best;
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  auto all = nearest_all(word, candidates);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

}  // namespace pk::config
