#include "sandbox/output_capture.h"

#include <gtest/gtest.h>

namespace pk::sandbox {
namespace {

TEST(output_capture_test, keeps_everything_under_the_cap) {
  output_capture c(10);
  c.append("abc");
  c.append("defg");
  const auto o = c.finish();
  EXPECT_EQ(o.text, "abcdefg");
  EXPECT_EQ(o.total_bytes, 7u);
  EXPECT_FALSE(o.truncated);
}

TEST(output_capture_test, keeps_head_and_tail_across_many_small_writes) {
  output_capture c(8);
  for (char ch = 'a'; ch <= 'z'; ++ch) c.append(std::string(1, ch));
  const auto o = c.finish();
  EXPECT_EQ(o.text, "abcd\n[... 18 bytes omitted ...]\nwxyz");
  EXPECT_EQ(o.total_bytes, 26u);
  EXPECT_TRUE(o.truncated);
}

TEST(output_capture_test, one_large_write_and_the_ring_wrapping) {
  output_capture c(6);
  c.append("0123456789");
  c.append("AB");
  EXPECT_EQ(c.finish().text, "012\n[... 6 bytes omitted ...]\n9AB");
  c.append("CDEFGHIJ");
  EXPECT_EQ(c.finish().text, "012\n[... 14 bytes omitted ...]\nHIJ");
  EXPECT_EQ(c.total_bytes(), 20u);
}

TEST(output_capture_test, exactly_at_the_cap_is_not_truncated) {
  output_capture c(4);
  c.append("ab");
  c.append("cd");
  EXPECT_EQ(c.finish().text, "abcd");
  EXPECT_FALSE(c.finish().truncated);
}

}  // namespace
}  // namespace pk::sandbox
