// Many episodes share one client: every call must come back whole and be counted once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "agent/llm/llm.h"
#include "fake_provider.h"

namespace pk::llm {
namespace {

TEST(concurrency, one_client_serves_many_threads) {
  constexpr int threads = 12;
  constexpr int calls = 5;
  nlohmann::json replies = nlohmann::json::array();
  for (int i = 0; i < threads * calls; ++i)
    replies.push_back({{"text", "ok"}, {"usage", {{"input", 100 + i}, {"output", 7}}}});
  pk::testkit::fake_provider fake(nlohmann::json{{"replies", replies}});

  for (protocol p : {protocol::openai_chat, protocol::anthropic}) {
    SCOPED_TRACE(std::string(to_string(p)));
    fake.load({{"replies", replies}});
    model_config m;
    m.name = "fake";
    m.provider = p;
    m.base_url = fake.base_url();
    m.model = "fake-model";
    m.price = prices{1.0, 1.0, 1.0, 2.0, true};
    auto c = make_client(m);
    usage_totals totals;
    std::vector<std::thread> pool;
    std::atomic<int> failures{0};
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (int i = 0; i < calls; ++i) {
          try {
            request req;
            req.messages.push_back(user_message("go"));
            const response r = c->complete(req);
            if (r.text != "ok") ++failures;
            totals.add(r, "fake");
          } catch (const std::exception&) {
            ++failures;
          }
        }
      });
    for (auto& t : pool) t.join();
    EXPECT_EQ(failures.load(), 0);
    const auto sum = totals.total();
    const std::int64_t n = threads * calls;
    EXPECT_EQ(sum.calls, n);
    EXPECT_EQ(sum.tokens.input, 100 * n + n * (n - 1) / 2);  // 100 + i over all i: each reply used once
    EXPECT_EQ(sum.tokens.output, 7 * n);
    EXPECT_DOUBLE_EQ(sum.cost_usd, (static_cast<double>(sum.tokens.input) * 1.0 + 7.0 * n * 2.0) / 1e6);
    EXPECT_EQ(totals.by_model().at("fake").calls, n);
  }
}

}  // namespace
}  // namespace pk::llm
