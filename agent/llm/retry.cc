#include "agent/llm/retry.h"

#include <algorithm>

namespace pk::llm::detail {

bool retryable_status(int status) {
  switch (status) {
    case 408: case 409: case 429: case 500: case 502: case 503: case 504: case 529: return true;
    default: return false;
  }
}

millis backoff_ceiling(const retry_policy& p, int attempt) {
  const int shift = std::clamp(attempt, 0, 30);
  const auto base = std::max<std::int64_t>(1, p.initial_backoff.count());
  const auto cap = std::max<std::int64_t>(base, p.max_backoff.count());
  const auto grown = base << shift;  // no overflow: base is a millisecond count, shift <= 30
  return millis(std::min(cap, grown));
}

millis retry_wait(const retry_policy& p, int attempt, std::optional<millis> retry_after, std::mt19937_64& rng) {
  if (retry_after) return *retry_after;
  std::uniform_int_distribution<std::int64_t> draw(0, backoff_ceiling(p, attempt).count());
  return millis(draw(rng));
}

}  // namespace pk::llm::detail
