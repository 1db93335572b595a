// `pkagent problems`, `pkagent eval`, `pkagent scan-multicast` and the hidden `pkagent _ranks`
// (the rank supervisor that `eval` starts inside its sandbox).
#pragma once

#include <CLI/CLI.hpp>

namespace pk::bench {

/// Adds the evaluator's subcommands to `app`; the one that runs sets `exit_code` (eval: 0 correct,
/// 1 any other verdict). Bad input (std::invalid_argument, config_error) and failures of the
/// evaluator or the reference are thrown, for the exit-status table of main.cc.
void add_bench_commands(CLI::App& app, int& exit_code);

}  // namespace pk::bench
