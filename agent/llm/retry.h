// When to retry a model call and how long to wait: exponential backoff with full jitter (a
// uniform wait in [0, min(cap, base * 2^attempt)]), which spreads many episodes' retries apart
// instead of synchronising them, and the provider's Retry-After when it sends one.
#pragma once

#include <optional>
#include <random>

#include "agent/llm/llm.h"

namespace pk::llm::detail {

/// 408, 409, 429, 500, 502, 503, 504 and 529 (Anthropic's "overloaded").
bool retryable_status(int status);

/// The upper bound of the jittered wait before retry number `attempt` (0-based).
millis backoff_ceiling(const retry_policy& p, int attempt);

/// The wait before retry `attempt`: Retry-After when given, else a uniform draw below the ceiling.
millis retry_wait(const retry_policy& p, int attempt, std::optional<millis> retry_after, std::mt19937_64& rng);

}  // namespace pk::llm::detail
