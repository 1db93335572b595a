// `pkagent sandbox [options] -- CMD [ARGS...]`: runs one command in the sandbox and prints its
// result. Also the `--sandbox bwrap|none` option every command that runs code shares.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sandbox/spec.h"

namespace pk::sandbox {

/// Adds `pkagent sandbox` to `app`; when it runs it sets `exit_code` to the command's own status
/// (128+signal when killed, 124 on timeout, 126/127 when it cannot be started). `command` holds
/// the words after `--`, which the caller splits off before parsing, so that no option of
/// pkagent's (a list-valued one such as --gpus included) can take any of them.
void add_sandbox_command(CLI::App& app, int& exit_code, const std::vector<std::string>& command);

/// Adds `--sandbox bwrap|none` to `c`, parsed by parse_isolation; `target` is set only when
/// the option is given, so it keeps the default of the struct it belongs to.
CLI::Option* add_isolation_option(CLI::App& c, isolation& target, const std::string& help);
CLI::Option* add_isolation_option(CLI::App& c, std::optional<isolation>& target, const std::string& help);

}  // namespace pk::sandbox
