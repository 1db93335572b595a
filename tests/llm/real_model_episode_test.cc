// A whole agent episode against a real model: `pkagent episode` with Gemma 3 270M served by
// scripts/serve-local-model (its defaults: one slot with the model's full context), the demo task,
// three steps, each reply's tokens capped by --max-output-tokens. The episode must reach its step
// limit: no HTTP 400 from a context the conversation outgrew, no model error. Skipped, with the
// reason, when the optional packages of scripts/requirements-llm.txt are not installed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <boost/process.hpp>
#include <nlohmann/json.hpp>

#include "config/paths.h"
#include "local_model_server.h"

namespace {

namespace bp = boost::process;
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int steps = 3;
constexpr int max_output_tokens = 96;  // bounds the test's time on a 2-core machine

// What the server says about itself (llama.cpp's GET /props), read with the venv's Python.
json server_props(int port, const fs::path& scratch) {
  const auto out = scratch / "props.json";
  const std::string code = "import json, urllib.request, sys; sys.stdout.write(urllib.request.urlopen("
                           "'http://127.0.0.1:" + std::to_string(port) + "/props', timeout=60).read().decode())";
  bp::system(bp::exe = "/usr/bin/env", bp::args = {pk::config::python(), "-c", code}, bp::std_out > out.string(),
             bp::std_err > bp::null, bp::std_in < bp::null);
  std::ifstream in(out);
  return json::parse(in, nullptr, false);
}

std::vector<json> read_events(const fs::path& transcript) {
  std::vector<json> events;
  std::ifstream in(transcript);
  for (std::string line; std::getline(in, line);) events.push_back(json::parse(line));
  return events;
}

TEST(real_model, agent_episode_runs_to_its_step_limit) {
  const auto dir = fs::temp_directory_path() / ("pk_real_episode_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (const std::string why = pk::testkit::local_model_server::skip_reason(dir); !why.empty()) GTEST_SKIP() << why;

  pk::testkit::local_model_server server(dir);
  ASSERT_GT(server.port(), 0) << "the model server did not start; its log:\n" << server.log();

  // The defaults of serve-local-model must leave room for an episode: one slot, >= 16k tokens.
  const json props = server_props(server.port(), dir);
  ASSERT_TRUE(props.is_object()) << "GET /props failed; server log:\n" << server.log();
  EXPECT_EQ(props.value("total_slots", 0), 1);
  EXPECT_GE(props["default_generation_settings"].value("n_ctx", 0), 16384) << props.dump();

  // Loaded shared machines generate slowly: generous timeouts, and no retries that would hide a 400.
  std::ofstream(dir / "models.toml") << "[retry]\nmax_retries = 0\n[timeouts]\nrequest_s = 1800.0\nidle_s = 1200.0\n";
  const auto out = dir / "episode";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = bp::system(
      bp::exe = std::string(PKAGENT_BIN_DIR) + "/pkagent",
      bp::args = {"episode", "--model", server.spec(), "--models", (dir / "models.toml").string(), "--workspace",
                  pk::config::data_path("prompts/demo/workspace").string(), "--task-file",
                  pk::config::data_path("prompts/demo/task.md").string(), "--set",
                  "limits.steps=" + std::to_string(steps), "--max-output-tokens", std::to_string(max_output_tokens),
                  "--seed", "1", "--out", out.string()},
      bp::std_out > (dir / "episode.out").string(), bp::std_err > (dir / "episode.err").string(),
      bp::std_in < bp::null);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[real model] " << steps << "-step episode: " << seconds << " s (server start "
            << server.startup_seconds() << " s)\n";

  ASSERT_TRUE(fs::exists(out / "transcript.jsonl")) << "exit " << rc << "; stderr:\n"
                                                     << std::ifstream(dir / "episode.err").rdbuf();
  const std::vector<json> events = read_events(out / "transcript.jsonl");
  ASSERT_FALSE(events.empty());
  const json& header = events.front();
  EXPECT_EQ(header["model"]["name"], "openai-compatible:127.0.0.1/v1#gemma-3-270m")
      << "the recorded model must not depend on the server's port";
  EXPECT_EQ(header["model"]["max_output_tokens"], max_output_tokens);

  int responses = 0;
  std::int64_t previous_input = 0;
  for (const json& e : events) {
    if (e["type"] != "response") continue;
    ++responses;
    const json& tokens = e["response"]["usage"];
    EXPECT_GT(tokens["input"].get<std::int64_t>(), previous_input) << "step " << e["step"] << ": the prompt grows";
    EXPECT_GT(tokens["output"].get<std::int64_t>(), 0) << "step " << e["step"];
    EXPECT_LE(tokens["output"].get<std::int64_t>(), max_output_tokens) << "step " << e["step"];
    previous_input = tokens["input"].get<std::int64_t>();
    std::cout << "[real model] step " << e["step"] << ": " << tokens["input"] << " in, " << tokens["output"]
              << " out, action " << e["action"]["kind"] << "\n";
  }
  const json& outcome = events.back();
  ASSERT_EQ(outcome["type"], "outcome");
  EXPECT_EQ(outcome["reason"], "step_limit") << outcome["message"];
  EXPECT_EQ(outcome["steps"], steps);
  EXPECT_EQ(responses, steps);
  EXPECT_EQ(rc, 1) << "pkagent episode exits 1 when a limit ends the episode (docs/cli.md)";
  fs::remove_all(dir);
}

}  // namespace
