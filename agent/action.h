// Turning a model reply into the one action it asks for (or the reason it asks for none).
#pragma once

#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/llm/llm.h"
#include "agent/prompts.h"

namespace pk::agent {

struct action {
  enum kind { bash, submit, invalid } kind = invalid;
  std::string command;  ///< bash: the command line
  /// invalid: what was wrong, as the variables of prompts/format_error.md
  template_vars problem;
  /// tools format: the ids of every tool call in the reply (each needs an answer)
  std::vector<std::string> call_ids;
};
std::string to_string(enum action::kind k);

/// Parses `reply` in `format`: tools wants exactly one call of `bash` {command} or `submit`;
/// text wants exactly one fenced ```bash (or ```sh) block, whose content `submit` submits. A reply
/// cut at the output limit (finish `length`) whose action is incomplete (a block left open, a
/// call whose arguments do not parse) runs nothing; its problem says it was cut (`cut`).
action parse_action(const llm::response& reply, action_format format);

/// The bodies of the ```bash / ```sh fenced blocks of `text`, in order; an unclosed last block
/// counts, and `last_open` (when given) says whether there is one.
std::vector<std::string> fenced_bash_blocks(const std::string& text, bool* last_open = nullptr);

/// The format-error observation for an invalid action (prompts/format_error.md).
std::string render_format_error(const action& a, const prompt_set& prompts);

nlohmann::json to_json(const action& a);

}  // namespace pk::agent
