// The commands of `pkb` in one table: each command's name, what it takes after its name, whether
// it leases GPUs, and its handler. `pkb help` and the server's dispatch both come from it, and
// each command's help text is prompts/pkb/help/<name>.md. `help` is the table's own command, so
// its handler lives here rather than among the handlers (handlers.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/run/pkb_tool/request.h"

namespace pk::pkb {

/// What a command takes after its name.
enum class argument_rule {
  none,     ///< nothing: the command works on ./solution.py
  command,  ///< `-- CMD...` (the `--` may be left out): a command line to run
  ignored,  ///< anything, unused
};

struct command {
  std::string_view name;
  std::vector<std::string_view> aliases;
  argument_rule arguments;
  bool leases_gpus;  ///< the handler runs under a lease of the problem's GPUs
  handler handle;
};

/// Every command, in the order `pkb help` lists them.
const std::vector<command>& commands();
/// The command called `name` (or one of its aliases); null when there is none.
const command* find_command(std::string_view name);
/// The commands' names, in the table's order: the help texts tool_texts::load requires.
std::vector<std::string_view> command_names();

/// How the command is called: "check", "run -- CMD...".
std::string synopsis(const command& c);
/// The text of `pkb help`: prompts/pkb/usage.md with one entry per command.
std::string usage_text(const tool_texts& texts);

/// The arguments `argv` (the command's name first) gives the command, or the answer saying
/// what is wrong with them.
struct parsed_arguments {
  std::vector<std::string> args;
  std::optional<std::string> error;
};
parsed_arguments parse_arguments(const command& c, const std::vector<std::string>& argv, const tool_texts& texts);

}  // namespace pk::pkb
