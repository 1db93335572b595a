// `pkagent sandbox` end to end: exit status mirroring, one word as a shell line and several as an
// argv, JSON, flags over config, bad config and bad flags.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace {

using pk::sandbox::testing::temp_dir;

struct cli_result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

cli_result pkagent(const std::string& args) {
  const std::string cmd = std::string(PKAGENT_BIN_DIR) + "/pkagent sandbox " + args + " 2>&1";
  cli_result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class sandbox_cli_test : public ::testing::Test {
 protected:
  std::string ws_arg() const { return "--workspace " + ws.path().string() + " "; }
  temp_dir ws;
};

TEST_F(sandbox_cli_test, exit_status_mirrors_the_command) {
  EXPECT_EQ(pkagent(ws_arg() + "-- 'exit 7'").status, 7);
  EXPECT_EQ(pkagent(ws_arg() + "-- true").status, 0);
  EXPECT_EQ(pkagent(ws_arg() + "-- 'kill -TERM $$'").status, 128 + 15);
  const auto timed = pkagent(ws_arg() + "--timeout 0.5 -- 'sleep 30'");
  EXPECT_EQ(timed.status, 124);
  EXPECT_NE(timed.out.find("timed out"), std::string::npos) << timed.out;
}

TEST_F(sandbox_cli_test, prints_output_and_json) {
  auto r = pkagent(ws_arg() + "-- echo hello world");
  EXPECT_EQ(r.out.rfind("hello world\n", 0), 0u) << r.out;
  r = pkagent(ws_arg() + "--json -- 'echo out; echo err >&2; exit 3'");
  ASSERT_EQ(r.status, 3);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["stdout"]["text"], "out\n");
  EXPECT_EQ(j["stderr"]["text"], "err\n");
  EXPECT_EQ(j["stdout"]["total_bytes"], 4);
  EXPECT_EQ(j["timed_out"], false);
  EXPECT_EQ(j["oom_killed"], false);
}

TEST_F(sandbox_cli_test, flags_override_the_config_file) {
  const auto cfg = ws.path() / "sb.toml";
  std::ofstream(cfg) << "[limits]\noutput = \"8\"\ntimeout_seconds = 0.5\n";
  auto r = pkagent(ws_arg() + "--json --config " + cfg.string() + " -- 'echo 0123456789abcdef'");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stdout"]["truncated"], true);
  EXPECT_EQ(j["stdout"]["total_bytes"], 17);
  r = pkagent(ws_arg() + "--json --config " + cfg.string() + " --output 1M -- 'echo 0123456789abcdef'");
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stdout"]["text"], "0123456789abcdef\n");
  EXPECT_EQ(pkagent(ws_arg() + "--config " + cfg.string() + " -- 'sleep 5'").status, 124);
  EXPECT_EQ(pkagent(ws_arg() + "--config " + cfg.string() + " --timeout 30 -- 'sleep 1'").status, 0);
}

TEST_F(sandbox_cli_test, bad_config_is_refused_naming_file_key_and_reason) {
  const auto cfg = ws.path() / "bad.toml";
  std::ofstream(cfg) << "[limits]\nprocesses = -3\n";
  const auto r = pkagent(ws_arg() + "--config " + cfg.string() + " -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(cfg.string() + ": limits.processes: must be >= 0, found -3"), std::string::npos) << r.out;
}

TEST_F(sandbox_cli_test, bad_flags_are_refused) {
  EXPECT_EQ(pkagent(ws_arg() + "--memory lots -- true").status, 2);
  EXPECT_EQ(pkagent(ws_arg() + "--sandbox docker -- true").status, 2);
  EXPECT_EQ(pkagent("--workspace /nonexistent-pk-dir -- true").status, 2);
  const auto none = pkagent(ws_arg() + "--");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.out.find("give the command after --"), std::string::npos) << none.out;
  const auto r = pkagent(ws_arg() + "--gpus 7 -- true");
  EXPECT_EQ(r.status, 125) << r.out;
  EXPECT_NE(r.out.find("GPU 7 was requested"), std::string::npos) << r.out;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(sandbox_cli_test, several_words_are_an_argv_that_no_shell_splits) {
  std::ofstream(ws.path() / "a file with spaces") << "spaced\n";
  for (const std::string mode : {"", "--sandbox none "}) {
    auto r = pkagent(ws_arg() + mode + "-- cat 'a file with spaces'");
    EXPECT_EQ(r.status, 0) << mode << r.out;
    EXPECT_NE(r.out.find("spaced\n"), std::string::npos) << mode << r.out;
    r = pkagent(ws_arg() + mode + "-- printenv SHLVL");  // no shell in between, which would set it
    EXPECT_EQ(r.status, 1) << mode << r.out;
    r = pkagent(ws_arg() + mode + "-- sh -c 'echo ok > f'");
    EXPECT_EQ(r.status, 0) << mode << r.out;
    EXPECT_EQ(read_file(ws.path() / "f"), "ok\n") << mode;
    std::filesystem::remove(ws.path() / "f");
    // A program that cannot start is the command's failure, as in a shell: not the sandbox's.
    r = pkagent(ws_arg() + mode + "-- no-such-program-pk x");
    EXPECT_EQ(r.status, 127) << mode << r.out;
    r = pkagent(ws_arg() + mode + "-- './a file with spaces' x");
    EXPECT_EQ(r.status, 126) << mode << r.out;
  }
}

TEST_F(sandbox_cli_test, everything_after_the_dashes_is_the_command) {
  // A list-valued option before `--` used to take it, so -L was refused as pkagent's own flag.
  const auto r = pkagent(ws_arg() + "--gpus 0 -- ls -L /");
  EXPECT_TRUE(r.status == 0 || r.status == 125) << r.out;  // 125: this host has no GPU 0
  EXPECT_EQ(r.out.find("-L"), std::string::npos) << r.out;
  const auto flags = pkagent(ws_arg() + "-- printf '%s|' --json --timeout 1");
  EXPECT_EQ(flags.status, 0) << flags.out;
  EXPECT_EQ(flags.out.rfind("--json|--timeout|1|", 0), 0u) << flags.out;
}

TEST_F(sandbox_cli_test, sandbox_none_warns_on_every_command) {
  const auto r = pkagent(ws_arg() + "--sandbox none -- 'echo ran'");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("WARNING: --sandbox=none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ran\n"), std::string::npos);
}

}  // namespace
