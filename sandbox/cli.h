// `pkagent sandbox [options] -- CMD...`: runs one command in the sandbox and prints its result.
#pragma once

#include <CLI/CLI.hpp>

namespace pk::sandbox {

/// Exit status of `pkagent sandbox` when the sandbox itself cannot be created (the command's
/// own statuses are mirrored: its exit code, 128+signal, 124 on timeout).
inline constexpr int sandbox_failure_status = 125;

/// Adds `pkagent sandbox` to `app`; when it runs it sets `exit_code`.
void add_sandbox_command(CLI::App& app, int& exit_code);

}  // namespace pk::sandbox
