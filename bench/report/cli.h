// `pkagent report RUN_DIR... [--html FILE]`: the markdown report on stdout, optionally an HTML page.
#pragma once

#include <CLI/CLI.hpp>

namespace pk::report {

/// Adds `pkagent report` to `app`; when it runs it sets `exit_code` to 0. A run that cannot be read
/// or an HTML file that cannot be written is std::invalid_argument (bad input, exit status 2).
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace pk::report
