#include "agent/llm/sse.h"

#include <gtest/gtest.h>

#include <vector>

namespace pk::llm::detail {
namespace {

std::vector<sse_event> parse_in_pieces(std::string_view text, std::size_t piece) {
  sse_parser p;
  std::vector<sse_event> out;
  for (std::size_t i = 0; i < text.size(); i += piece)
    p.feed(text.substr(i, piece), [&](const sse_event& e) { out.push_back(e); });
  return out;
}

TEST(sse, events_survive_any_chunking) {
  const std::string_view text =
      "event: message_start\ndata: {\"a\":1}\n\n: keep-alive comment\n\ndata: line1\ndata: line2\n\ndata:[DONE]\n\n";
  for (std::size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    const auto ev = parse_in_pieces(text, piece);
    ASSERT_EQ(ev.size(), 3u) << "piece " << piece;
    EXPECT_EQ(ev[0].event, "message_start");
    EXPECT_EQ(ev[0].data, "{\"a\":1}");
    EXPECT_EQ(ev[1].event, "");
    EXPECT_EQ(ev[1].data, "line1\nline2");
    EXPECT_EQ(ev[2].data, "[DONE]");
  }
}

TEST(sse, crlf_and_cr_line_endings) {
  for (std::size_t piece : {1u, 4u, 100u}) {
    const auto ev = parse_in_pieces("data: a\r\n\r\ndata: b\r\rdata: c\n\n", piece);
    ASSERT_EQ(ev.size(), 3u) << "piece " << piece;
    EXPECT_EQ(ev[0].data, "a");
    EXPECT_EQ(ev[1].data, "b");
    EXPECT_EQ(ev[2].data, "c");
  }
}

TEST(sse, an_unterminated_event_is_not_emitted) {
  const auto ev = parse_in_pieces("data: complete\n\ndata: cut off", 5);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "complete");
}

}  // namespace
}  // namespace pk::llm::detail
