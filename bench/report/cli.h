// `pkagent report RUN_DIR... [--html FILE]`: the markdown report on stdout, optionally an HTML page.
#pragma once

#include <CLI/CLI.hpp>

namespace pk::report {

/// Adds `pkagent report` to `app`; when it runs it sets `exit_code` (0, or 1 when a run cannot be
/// read or the HTML cannot be written).
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace pk::report
