// Three completions through our client against a real model (Gemma 3 270M) served by llama.cpp's
// OpenAI-compatible server on loopback (scripts/serve-local-model). Skipped, with the reason,
// when the optional packages of scripts/requirements-llm.txt are not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "agent/llm/llm.h"
#include "config/paths.h"
#include "local_model_server.h"

namespace pk::llm {
namespace {

void expect_well_formed(const response& r, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_GT(r.tokens.input, 0);
  EXPECT_GT(r.tokens.output, 0);
  EXPECT_TRUE(r.finish == finish_reason::stop || r.finish == finish_reason::length ||
              r.finish == finish_reason::tool_calls)
      << r.finish_raw;
  EXPECT_TRUE(!r.text.empty() || !r.tool_calls.empty() || r.finish == finish_reason::length);
  EXPECT_EQ(r.retries, 0);
  EXPECT_GT(r.latency.count(), 0);
  EXPECT_FALSE(r.raw.is_null());
  std::cout << "[real model] " << what << ": " << r.tokens.input << " in, " << r.tokens.output << " out, "
            << r.latency.count() << " ms, finish " << to_string(r.finish) << ", text: " << r.text << "\n";
}

TEST(real_model, three_completions_through_our_client) {
  const auto dir = std::filesystem::temp_directory_path() / ("pk_real_model_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  if (const std::string why = testkit::local_model_server::skip_reason(dir); !why.empty()) GTEST_SKIP() << why;

  testkit::local_model_server server(dir);
  ASSERT_GT(server.port(), 0) << "the model server did not start; its log:\n" << server.log();
  std::cout << "[real model] server ready on port " << server.port() << " after " << server.startup_seconds()
            << " s\n";

  model_config cfg = resolve_model(server.spec(), pk::config::data_path("config/models.toml"));
  cfg.retry.max_retries = 1;
  cfg.timeout.request = millis(600'000);  // a loaded 2-core CI machine generates slowly
  cfg.timeout.idle = millis(300'000);
  auto client = make_client(cfg);

  request req;
  req.messages.push_back(system_message("You are a terse assistant."));
  req.messages.push_back(user_message("Name one prime number."));
  req.params.temperature = 0.0;
  req.params.max_output_tokens = 8;
  req.params.seed = 1;

  req.stream = false;
  expect_well_formed(client->complete(req), "whole");

  req.stream = true;
  std::string deltas;
  int pieces = 0;
  req.on_text = [&](std::string_view d) {
    deltas += d;
    ++pieces;
  };
  const response streamed = client->complete(req);
  expect_well_formed(streamed, "streamed");
  EXPECT_GE(pieces, 1);
  EXPECT_EQ(deltas, streamed.text);
  req.on_text = nullptr;

  req.messages[1] = user_message("What is the weather in Paris? Use the tool.");
  req.tools.push_back({"get_weather", "The current weather in a city",
                       json{{"type", "object"},
                            {"properties", {{"city", {{"type", "string"}}}}},
                            {"required", json::array({"city"})}}});
  const response with_tool = client->complete(req);
  expect_well_formed(with_tool, "with a tool definition");
  for (const auto& call : with_tool.tool_calls) EXPECT_EQ(call.name, "get_weather");

  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pk::llm
