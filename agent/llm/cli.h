// `pkagent models`: the configured models, their provider, and whether each key is set.
#pragma once

#include <CLI/CLI.hpp>

namespace pk::llm {

/// Adds the `models` subcommand to `app`; it sets `exit_code` when it runs.
void add_models_command(CLI::App& app, int& exit_code);

}  // namespace pk::llm
