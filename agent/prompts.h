// The model-facing texts of an episode, loaded from prompts/ and checked at load time.
#pragma once

#include <filesystem>
#include <vector>

#include "agent/llm/llm.h"
#include "agent/prompt_template.h"

namespace pk::agent {

struct prompt_set {
  prompt_template system;        ///< system.md: how to act
  prompt_template task;          ///< task.md: the task text
  prompt_template observation;   ///< observation.md: what a command did
  prompt_template truncated;     ///< truncated.md: the marker where output was cut
  prompt_template format_error;  ///< format_error.md: the reply had no single valid action
  prompt_template limit_warning;  ///< limit_warning.md: a limit is nearly used up
  std::vector<llm::tool_spec> tools;  ///< tools.json: the `bash` and `submit` tools

  /// Loads every template from `dir` (default: the installed prompts/). Throws template_error.
  static prompt_set load(const std::filesystem::path& dir);
};

}  // namespace pk::agent
