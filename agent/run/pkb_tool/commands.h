// The commands of `pkb` in one table: each command's name, what it takes after its name, whether
// it leases GPUs, and its handler. `pkb help` and the server's dispatch both come from it, and
// each command's help text is prompts/pkb/help/<name>.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/run/pkb_tool/context.h"
#include "agent/run/pkb_tool/protocol.h"

namespace pk::pkb {

/// What a command takes after its name.
enum class argument_rule {
  none,     ///< nothing: the command works on ./solution.py
  command,  ///< `-- CMD...` (the `--` may be left out): a command line to run
  ignored,  ///< anything, unused
};

/// One request as its handler sees it.
struct request {
  std::string name;               ///< the command as typed
  std::vector<std::string> args;  ///< what follows the name (for argument_rule::command: after `--`)
  std::vector<int> gpus;          ///< leased for this request (commands that lease)
  nlohmann::json& log;            ///< the request's pkb.jsonl line: handlers add what they found
};

/// Answers a request; throws std::invalid_argument for the model's mistakes (exit 2) and
/// anything else for the tool's own failures (exit 3).
using handler = reply (*)(const context& ctx, request& req);

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
