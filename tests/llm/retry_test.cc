#include "agent/llm/retry.h"

#include <gtest/gtest.h>

#include "agent/llm/http.h"

namespace pk::llm::detail {
namespace {

TEST(retry, retryable_statuses_are_exactly_the_transient_ones) {
  for (int s : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(retryable_status(s)) << s;
  for (int s : {200, 400, 401, 403, 404, 413, 422, 501}) EXPECT_FALSE(retryable_status(s)) << s;
}

TEST(retry, ceiling_doubles_up_to_the_cap) {
  retry_policy p;
  p.initial_backoff = millis(100);
  p.max_backoff = millis(1000);
  EXPECT_EQ(backoff_ceiling(p, 0), millis(100));
  EXPECT_EQ(backoff_ceiling(p, 1), millis(200));
  EXPECT_EQ(backoff_ceiling(p, 3), millis(800));
  EXPECT_EQ(backoff_ceiling(p, 4), millis(1000));
  EXPECT_EQ(backoff_ceiling(p, 60), millis(1000));
}

TEST(retry, full_jitter_stays_within_the_ceiling_and_spreads) {
  retry_policy p;
  p.initial_backoff = millis(1000);
  p.max_backoff = millis(8000);
  std::mt19937_64 rng(42);
  millis lo{1'000'000}, hi{0};
  for (int i = 0; i < 2000; ++i) {
    const millis w = retry_wait(p, 2, std::nullopt, rng);
    ASSERT_GE(w.count(), 0);
    ASSERT_LE(w, millis(4000));
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  EXPECT_LT(lo, millis(400));  // full jitter: waits near zero occur
  EXPECT_GT(hi, millis(3600));
}

TEST(retry, retry_after_wins_over_backoff) {
  retry_policy p;
  std::mt19937_64 rng(1);
  EXPECT_EQ(retry_wait(p, 0, millis(7000), rng), millis(7000));
}

TEST(retry, retry_after_header_forms) {
  EXPECT_EQ(parse_retry_after("3"), millis(3000));
  EXPECT_EQ(parse_retry_after(" 1.5 "), millis(1500));
  EXPECT_EQ(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT"), millis(0));  // a past date: now
  const auto future = parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT");
  ASSERT_TRUE(future);
  EXPECT_GT(*future, millis(1000LL * 3600 * 24 * 365));
  EXPECT_FALSE(parse_retry_after("soon"));
  EXPECT_FALSE(parse_retry_after(""));
}

}  // namespace
}  // namespace pk::llm::detail
