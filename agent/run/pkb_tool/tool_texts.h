// Every text of the pkb tool that the model reads, loaded from prompts/pkb/ and checked at load
// time like the agent's own prompts (agent/prompt_template.h): the usage, one help text per
// command (prompts/pkb/help/<command>.md), the answers that say why nothing ran, the submit
// verdict, and the sentences around the profile table (prompts/pkb/profile/).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/prompt_template.h"

namespace pk::pkb {

/// The sentences of `pkb profile`'s answer (prompts/pkb/profile/).
struct profile_texts {
  agent::prompt_template trial;       ///< trial.md: heads the profiled trial's own output
  agent::prompt_template summary;     ///< summary.md: {{launches}} {{kernels}} {{kernel_us}}
  agent::prompt_template more;        ///< more.md: {{count}} kernels beyond the table, {{kernel_us}}
  agent::prompt_template legend;      ///< legend.md: after the table
  agent::prompt_template no_kernels;  ///< no_kernels.md: {{#left_out}}: ncu said so itself
  agent::prompt_template failed;      ///< failed.md: {{exit_code}} {{#counters_restricted}}
  agent::prompt_template unreadable;  ///< unreadable.md: {{reason}}
  agent::prompt_template stopped;     ///< stopped.md: {{seconds}}, printed when ncu is stopped
};

struct tool_texts {
  /// help/<command>.md for every command of the table (commands.h), by command name.
  std::map<std::string, agent::prompt_template, std::less<>> help;
  agent::prompt_template usage;                ///< usage.md: {{commands}}
  agent::prompt_template unknown_command;      ///< {{command}}; the usage follows it
  agent::prompt_template bad_arguments;        ///< {{command}} {{#needs_command}}
  agent::prompt_template bad_request;          ///< {{#unreadable}} {{reason}}
  agent::prompt_template no_gpus;              ///< {{command}} {{#over_cap}} {{reason}}
  agent::prompt_template multicast_refused;    ///< {{command}} {{findings}}
  agent::prompt_template profile_unavailable;  ///< {{#cpu}}
  agent::prompt_template timed_out;            ///< {{command}} {{seconds}}
  agent::prompt_template submit_verdict;       ///< {{#ready}}
  agent::prompt_template failing_rank;         ///< heads the failing rank's shaped output
  agent::prompt_template failed;               ///< {{command}} {{#tool_fault}} {{reason}}
  profile_texts profile;

  /// Loads prompts_dir/pkb/ with one help text per command of `commands` (the table's names,
  /// command_names() of commands.h). Throws agent::template_error naming the file and the fix, also
  /// when help/ lacks one of `commands` or holds a text for a command not among them.
  static tool_texts load(const std::filesystem::path& prompts_dir, const std::vector<std::string_view>& commands);
};

}  // namespace pk::pkb
