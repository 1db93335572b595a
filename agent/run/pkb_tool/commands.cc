#include "agent/run/pkb_tool/commands.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "agent/run/pkb_tool/handlers.h"

namespace pk::pkb {

namespace {

// The help texts' column: the synopses are padded to it, continuation lines indented to it.
constexpr std::size_t help_column = 17;

reply show_help(const context& ctx, request&) { return {0, usage_text(*ctx.texts)}; }

}  // namespace

const std::vector<command>& commands() {
  static const std::vector<command> table = {
      {"check", {}, argument_rule::none, true, check_solution},
      {"bench", {}, argument_rule::none, true, bench_solution},
      {"profile", {}, argument_rule::none, true, profile_solution},
      {"run", {}, argument_rule::command, true, run_in_sandbox},
      {"submit", {}, argument_rule::none, true, submit_solution},
      {"help", {"--help", "-h"}, argument_rule::ignored, false, show_help},
  };
  return table;
}

const command* find_command(std::string_view name) {
  for (const command& c : commands())
    if (c.name == name || std::find(c.aliases.begin(), c.aliases.end(), name) != c.aliases.end()) return &c;
  return nullptr;
}

std::vector<std::string_view> command_names() {
  std::vector<std::string_view> names;
  for (const command& c : commands()) names.push_back(c.name);
  return names;
}

std::string synopsis(const command& c) {
  return c.arguments == argument_rule::command ? fmt::format("{} -- CMD...", c.name) : std::string(c.name);
}

std::string usage_text(const tool_texts& texts) {
  const std::string indent(2 + help_column, ' ');
  std::string lines;
  for (const command& c : commands()) {
    std::istringstream help(texts.help.at(std::string(c.name)).render({}));
    std::string entry = fmt::format("  {:<{}}", synopsis(c) + " ", help_column);
    bool first = true;
    for (std::string line; std::getline(help, line); first = false) entry += (first ? "" : "\n" + indent) + line;
    lines += (lines.empty() ? "" : "\n") + entry;
  }
  return texts.usage.render({{"commands", lines}});
}

parsed_arguments parse_arguments(const command& c, const std::vector<std::string>& argv, const tool_texts& texts) {
  parsed_arguments out;
  const std::string name = argv.empty() ? std::string(c.name) : argv[0];
  std::size_t from = 1;
  switch (c.arguments) {
    case argument_rule::ignored:
      return out;
    case argument_rule::none:
      if (argv.size() > 1) out.error = texts.bad_arguments.render({{"command", name}, {"needs_command", ""}});
      return out;
    case argument_rule::command:
      if (argv.size() > 1 && argv[1] == "--") from = 2;
      if (from >= argv.size()) {
        out.error = texts.bad_arguments.render({{"command", name}, {"needs_command", "1"}});
        return out;
      }
      out.args.assign(argv.begin() + static_cast<std::ptrdiff_t>(from), argv.end());
      return out;
  }
  return out;
}

}  // namespace pk::pkb
