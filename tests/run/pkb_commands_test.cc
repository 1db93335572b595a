// The pkb command table: the usage and the dispatch come from it, every command has its help
// text in prompts/pkb/help/, and the task prompt names exactly its commands.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "agent/run/pkb_tool/commands.h"
#include "agent/run/pkb_tool/tool_texts.h"
#include "config/paths.h"
#include "config/read_file.h"

namespace pk::pkb {
namespace {

namespace fs = std::filesystem;

const tool_texts& texts() {
  static const auto t = tool_texts::load(config::data_path("prompts"), command_names());
  return t;
}

TEST(PkbCommands, UsageListsEveryCommandInTableOrderWithItsHelp) {
  const std::string usage = usage_text(texts());
  EXPECT_EQ(usage.rfind("usage: pkb COMMAND\n", 0), 0u) << usage;
  std::size_t last = 0;
  for (const command& c : commands()) {
    const std::string entry = "\n  " + synopsis(c) + " ";
    const std::size_t at = usage.find(entry);
    ASSERT_NE(at, std::string::npos) << c.name << " is not listed:\n" << usage;
    EXPECT_GT(at, last) << c.name << " is out of the table's order";
    last = at;
    // The help text's first line follows on the same line, in the help column.
    std::string first_line = texts().help.at(std::string(c.name)).render({});
    first_line = first_line.substr(0, first_line.find('\n'));
    EXPECT_EQ(usage.find(first_line, at), at + 1 + 2 + 17) << c.name << "\n" << usage;
  }
  // A help text of several lines continues in the same column.
  EXPECT_NE(usage.find("  run -- CMD...    run CMD in a sandbox"), std::string::npos) << usage;
  EXPECT_NE(usage.find("\n                   one argument is a shell line"), std::string::npos) << usage;
  EXPECT_NE(usage.find("GPU time counts against the episode's budget.\n"), std::string::npos) << usage;
}

TEST(PkbCommands, NamesAndAliasesFindTheirCommand) {
  ASSERT_NE(find_command("check"), nullptr);
  EXPECT_EQ(find_command("check")->name, "check");
  EXPECT_EQ(find_command("-h"), find_command("help"));
  EXPECT_EQ(find_command("--help"), find_command("help"));
  EXPECT_EQ(find_command("frobnicate"), nullptr);
  EXPECT_EQ(find_command(""), nullptr);
  std::set<std::string_view> names;
  for (const command& c : commands()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " twice";
    EXPECT_NE(c.handle, nullptr) << c.name;
  }
  EXPECT_FALSE(find_command("help")->leases_gpus) << "help must answer without a GPU";
  EXPECT_TRUE(find_command("check")->leases_gpus);
}

TEST(PkbCommands, ArgumentsFollowEachCommandsRule) {
  const command& check = *find_command("check");
  const command& run = *find_command("run");
  const command& help = *find_command("help");
  EXPECT_FALSE(parse_arguments(check, {"check"}, texts()).error);
  const auto extra = parse_arguments(check, {"check", "extra"}, texts());
  ASSERT_TRUE(extra.error);
  EXPECT_EQ(*extra.error, "pkb check: takes no arguments (it works on ./solution.py)\n");

  auto parsed = parse_arguments(run, {"run", "--", "sh", "-c", "exit 7"}, texts());
  EXPECT_FALSE(parsed.error);
  EXPECT_EQ(parsed.args, (std::vector<std::string>{"sh", "-c", "exit 7"}));
  parsed = parse_arguments(run, {"run", "make && ./t"}, texts());
  EXPECT_EQ(parsed.args, (std::vector<std::string>{"make && ./t"})) << "the -- may be left out";
  for (const std::vector<std::string>& empty : {std::vector<std::string>{"run"}, {"run", "--"}}) {
    const auto missing = parse_arguments(run, empty, texts());
    ASSERT_TRUE(missing.error);
    EXPECT_EQ(*missing.error, "pkb run: give the command after --, e.g. pkb run -- python3 test.py\n");
  }
  EXPECT_FALSE(parse_arguments(help, {"help", "anything", "at all"}, texts()).error);
}

// A prompts directory whose help/ lacks a command, or describes one pkb does not have, is refused
// when it is loaded, naming the file.
TEST(PkbCommands, HelpTextsMustMatchTheTable) {
  char tmpl[] = "/tmp/pkb-texts-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  fs::copy(config::data_path("prompts"), dir, fs::copy_options::recursive);
  EXPECT_NO_THROW(tool_texts::load(dir, command_names()));

  std::ofstream(dir / "pkb" / "help" / "deploy.md") << "ship it\n";
  try {
    tool_texts::load(dir, command_names());
    ADD_FAILURE() << "an extra help text was accepted";
  } catch (const agent::template_error& e) {
    EXPECT_NE(std::string(e.what()).find("deploy.md: pkb has no command 'deploy'"), std::string::npos) << e.what();
  }
  fs::remove(dir / "pkb" / "help" / "deploy.md");

  fs::remove(dir / "pkb" / "help" / "bench.md");
  try {
    tool_texts::load(dir, command_names());
    ADD_FAILURE() << "a missing help text was accepted";
  } catch (const agent::template_error& e) {
    EXPECT_NE(std::string(e.what()).find("bench.md: missing"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// The task prompt lists the tool for the model; it must name the table's commands and no other.
TEST(PkbCommands, TheProblemPromptNamesExactlyTheTablesCommands) {
  const std::string prompt = read_file(config::data_path("prompts/problem/problem.md"));
  static const std::regex mention(R"(`pkb ([a-z]+)[^`]*`)");
  std::set<std::string> named;
  for (auto it = std::sregex_iterator(prompt.begin(), prompt.end(), mention); it != std::sregex_iterator(); ++it)
    named.insert((*it)[1]);
  std::set<std::string> table;
  for (const command& c : commands())
    if (c.leases_gpus) table.insert(std::string(c.name));
  EXPECT_EQ(named, table);
  for (const std::string& n : named)
    EXPECT_NE(find_command(n), nullptr) << "prompts/problem/problem.md names pkb " << n;
}

}  // namespace
}  // namespace pk::pkb
