// pkagent's command line as a user meets it: misspelt commands and options named with a
// suggestion, one exit-status table for every command, --set with bare strings and suggested
// keys, and `pkagent models`.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/process.hpp>
#include <gtest/gtest.h>

#include "agent_fixture.h"

namespace pk::agent::test {
namespace {

namespace bp = boost::process;

struct cli_result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

cli_result run_pkagent(const std::vector<std::string>& args) {
  bp::ipstream out;
  bp::child c(std::string(PKAGENT_BIN_DIR) + "/pkagent", bp::args = args, (bp::std_out & bp::std_err) > out);
  cli_result r;
  for (std::string line; std::getline(out, line);) r.out += line + "\n";
  c.wait();
  r.status = c.exit_code();
  return r;
}

bool has(const cli_result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

TEST(pkagent_cli, AMisspeltOptionIsNamedWithTheNearestOne) {
  // CLI11 alone says "--problem is required" here, naming neither the typo nor the fix.
  const auto r = run_pkagent({"eval", "--problme", "1", "--solution", "s.py"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "pkagent eval: unknown option '--problme'; did you mean '--problem'?")) << r.out;
  EXPECT_TRUE(has(r, "pkagent eval --help")) << r.out;
  const auto sandbox = run_pkagent({"sandbox", "--timout", "5", "--", "true"});
  EXPECT_EQ(sandbox.status, 2) << sandbox.out;
  EXPECT_TRUE(has(sandbox, "did you mean '--timeout'?")) << sandbox.out;
  // One step from two options: both are named, not the first one found.
  const auto run = run_pkagent({"run", "--modle", "demo", "--problems", "1"});
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_TRUE(has(run, "unknown option '--modle'; did you mean '--mode' or '--model'?")) << run.out;
}

TEST(pkagent_cli, AMisspeltCommandIsNamedWithTheNearestOne) {
  auto r = run_pkagent({"evla", "--problem", "1"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "unknown command 'evla'; did you mean 'eval'?")) << r.out;
  r = run_pkagent({"frobnicate"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "unknown command 'frobnicate'; the commands are: ")) << r.out;
  EXPECT_FALSE(has(r, "_ranks")) << "the internal command is not offered: " << r.out;
}

TEST(pkagent_cli, ParseErrorsOfEveryKindExitWithTwo) {
  // CLI11's own codes (105 conversion, 106 required, 109 extras ...) all become the table's 2.
  EXPECT_EQ(run_pkagent({}).status, 2);
  EXPECT_EQ(run_pkagent({"eval", "--problem", "1"}).status, 2);                             // required
  EXPECT_EQ(run_pkagent({"eval", "--problem", "1", "--solution", "s", "--world", "x"}).status, 2);  // conversion
  EXPECT_EQ(run_pkagent({"problems", "extra"}).status, 2);                                 // extras
  EXPECT_EQ(run_pkagent({"report", "/nonexistent/pk-run"}).status, 2);                     // validation
  const auto r = run_pkagent({"run", "--sandbox", "docker", "--out", "/tmp/pk-never"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "'docker' is not an isolation")) << "parsed by parse_isolation: " << r.out;
  // A check of the command's own says what is missing once, under the command's name.
  const auto e = run_pkagent({"episode", "--model", "demo", "--out", "/tmp/pk-never-created"});
  EXPECT_EQ(e.status, 2) << e.out;
  EXPECT_TRUE(has(e, "pkagent episode: a new episode needs --workspace")) << e.out;
  EXPECT_FALSE(fs::exists("/tmp/pk-never-created"));
}

TEST(pkagent_cli, HelpShowsTheExitStatusTable) {
  const auto r = run_pkagent({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* row : {"Exit status", "bad input", "124", "125", "128+N", "docs/cli.md"})
    EXPECT_TRUE(has(r, row)) << row << "\n" << r.out;
  EXPECT_EQ(run_pkagent({"--version"}).status, 0);
}

TEST(pkagent_cli, RunHelpNamesEveryKindOfModel) {
  const auto r = run_pkagent({"run", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(has(r, "openai-compatible:URL#MODEL")) << r.out;
  EXPECT_TRUE(has(r, "demo")) << r.out;
}

TEST(pkagent_cli, ModelsListsDemoAndTakesTheSameFlagAsRun) {
  auto r = run_pkagent({"models"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "\ndemo ")) << r.out;
  const auto dir = fs::temp_directory_path() / ("pk-models-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "models.toml", "[models.my-local]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:1/v1\"\n"
                                  "model = \"tiny\"\nprice = { input = 0.0, output = 0.0 }\n");
  r = run_pkagent({"models", "--models", (dir / "models.toml").string()});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "my-local")) << r.out;
  EXPECT_EQ(run_pkagent({"models", "--file", (dir / "models.toml").string()}).status, 2);
  fs::remove_all(dir);
}

TEST(pkagent_cli, AMisspeltSettingIsNamedWithTheNearestKey) {
  const auto r = run_pkagent({"episode", "--workspace", config::data_path("prompts/demo/workspace").string(),
                              "--task", "t", "--model", "demo", "--out", "/tmp/pk-never-created",
                              "--set", "limits.step=5"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "--set limits.step=5: limits.step: unknown key; did you mean limits.steps?")) << r.out;
  EXPECT_FALSE(fs::exists("/tmp/pk-never-created"));
}

TEST_F(agent_test, AnEpisodeEndedByALimitExitsWithOne) {
  fake_.load(script(action_format::tools, {"true", "true"}));
  std::string output;
  auto args = episode_args(dir_ / "limited", action_format::tools);
  args.insert(args.end(), {"--set", "limits.steps=1"});
  EXPECT_EQ(pkagent(args, &output), 1) << output;
  // Running it again is bad input: the episode is finished.
  EXPECT_EQ(pkagent(args, &output), 2) << output;
  EXPECT_NE(output.find("already finished"), std::string::npos) << output;
}

TEST_F(agent_test, AModelWithoutPricesSpendsAnUnknownAmountNotZero) {
  // The same model with its price line taken out, as a local server's entry would be.
  std::string table = read_file(models_);
  const auto price = table.find("price = ");
  ASSERT_NE(price, std::string::npos);
  table.erase(price, table.find('\n', price) + 1 - price);
  write_file(models_, table);
  fake_.load(script(action_format::tools, {"true", "submit"}));
  std::string output;
  auto args = episode_args(dir_ / "unpriced", action_format::tools);
  args.pop_back();  // -q: the progress is what this test reads
  ASSERT_EQ(pkagent(args, &output), 0) << output;
  EXPECT_NE(output.find("out tokens, $ unknown,"), std::string::npos) << output;
  EXPECT_EQ(output.find("$0.0000"), std::string::npos) << output;
}

}  // namespace
}  // namespace pk::agent::test
