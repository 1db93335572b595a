// `pkagent problems`, `pkagent eval`, `pkagent scan-multicast` and the hidden `pkagent _ranks`
// (the rank supervisor that `eval` starts inside its sandbox).
#pragma once

#include <CLI/CLI.hpp>

namespace pk::bench {

/// Adds the evaluator's subcommands to `app`; the one that runs sets `exit_code`
/// (eval: 0 correct, 1 any other verdict, 2 bad input, 3 the evaluator or the reference failed).
void add_bench_commands(CLI::App& app, int& exit_code);

}  // namespace pk::bench
