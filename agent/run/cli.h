// `pkagent run`: agent or zero-shot episodes over benchmark problems, scored and recorded.
#pragma once

#include <CLI/CLI.hpp>

namespace pk::run {

/// Adds `run` to `app`; it sets `exit_code` when it runs (0 when every episode was run and
/// scored, 1 when some failed to run; errors are thrown, for main's exit-status table).
void add_run_command(CLI::App& app, int& exit_code);

}  // namespace pk::run
