// `pkagent episode` (run or resume one episode) and `pkagent replay` (render, re-execute, fork).
#pragma once

#include <CLI/CLI.hpp>

namespace pk::agent {

/// Adds the `episode` and `replay` subcommands to `app`; they set `exit_code` when they run.
void add_agent_commands(CLI::App& app, int& exit_code);

}  // namespace pk::agent
