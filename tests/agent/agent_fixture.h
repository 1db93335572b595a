// Shared set-up for the agent tests: a task on disk, the fake provider as a model in a
// models.toml of its own, the real sandbox, and the pkagent binary for CLI runs.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/process.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/episode_dir.h"
#include "agent/model_choice.h"
#include "agent/transcript.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "fake_provider.h"
#include "sandbox/sandbox.h"

namespace pk::agent::test {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr const char* key_var = "PK_AGENT_TEST_KEY";
inline constexpr const char* key_value = "sk-agent-test-7f3a9c1e5b2d4f6a8c0e";

inline void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// One scripted model reply that runs `command` (or submits, for "submit") in `format`.
inline json reply(action_format format, const std::string& command, double delay_s = 0) {
  json r = format == action_format::tools
               ? json{{"text", ""},
                      {"tool_calls", {command == "submit"
                                          ? json{{"name", "submit"}, {"arguments", json::object()}}
                                          : json{{"name", "bash"}, {"arguments", {{"command", command}}}}}}}
               : json{{"text", fmt::format("Next:\n```bash\n{}\n```\n", command)}};
  r["usage"] = {{"input", 100}, {"output", 20}};
  if (delay_s > 0) r["delay_s"] = delay_s;
  return r;
}

inline json script(action_format format, const std::vector<std::string>& commands, double delay_s = 0) {
  json replies = json::array();
  for (const auto& c : commands) replies.push_back(reply(format, c, delay_s));
  return {{"replies", replies}};
}

class agent_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkagent-agent-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    write_file(dir_ / "task" / "workspace" / "data.txt", "3\n1\n2\n");
    setenv(key_var, key_value, 1);
    models_ = dir_ / "models.toml";
    write_file(models_, fmt::format(R"([models.fake]
provider = "openai-chat"
base_url = "{}"
model = "fake-model"
api_key_env = "{}"
price = {{ input = 1000.0, output = 2000.0 }}
retry = {{ max_retries = 0 }}
)", fake_.base_url(), key_var));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  task_spec task() const {
    return {"unit-task", "Sort the numbers in data.txt.", dir_ / "task" / "workspace", {}};
  }

  episode_options options(action_format format) const {
    episode_options o;
    o.cfg.action_format = format;
    o.cfg.limits.command_timeout_seconds = 30;
    o.prompts = prompt_set::load(config::data_path("prompts"));
    return o;
  }

  /// Runs an episode in-process against the fake provider.
  episode_result run(const json& fake_script, episode_options o, const fs::path& out) {
    fake_.load(fake_script);
    chosen_model m = choose_model("fake", models_);
    o.model = m.config;
    return start_episode(task(), o, m.client.get(), out);
  }

  /// Runs the pkagent binary with `args`; returns its exit code, stdout+stderr in *output.
  int pkagent(const std::vector<std::string>& args, std::string* output = nullptr) {
    boost::process::ipstream out;
    boost::process::child c(std::string(PKAGENT_BIN_DIR) + "/pkagent", boost::process::args = args,
                            (boost::process::std_out & boost::process::std_err) > out);
    std::string all, line;
    while (std::getline(out, line)) all += line + "\n";
    c.wait();
    if (output) *output = all;
    return c.exit_code();
  }

  std::vector<std::string> episode_args(const fs::path& out, action_format f) const {
    return {"episode", "--workspace", (dir_ / "task" / "workspace").string(), "--task",
            "Sort the numbers in data.txt.", "--model", "fake", "--models", models_.string(),
            "--out", out.string(), "--set", fmt::format("action.format=\"{}\"", to_string(f)), "-q"};
  }

  testkit::fake_provider fake_;
  fs::path dir_;
  fs::path models_;
};

/// The events of `file` of `type`, in order.
inline std::vector<json> events(const transcript_file& t, const std::string& type) {
  std::vector<json> out;
  for (const json& e : t.events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

}  // namespace pk::agent::test
