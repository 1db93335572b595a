// pkagent: one binary, one subcommand per job. Each component adds its own subcommands
// (sandbox/cli.h, bench/cli.h, agent/cli.h ...); this file only assembles them and maps
// errors to exit codes.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "agent/llm/cli.h"
#include "agent/cli.h"
#include "agent/run/cli.h"
#include "bench/cli.h"
#include "bench/report/cli.h"
#include "config/toml_reader.h"
#include "sandbox/cli.h"
#include "pkagent/build_info.h"

int main(int argc, char** argv) {
  CLI::App app{"pkagent: an LLM agent that writes fast multi-GPU CUDA kernels, and the judge that scores them"};
  app.set_version_flag("--version", fmt::format("pkagent {} ({})", pk::build_info::version,
                                                pk::build_info::git_commit));
  app.require_subcommand(1);
  int exit_code = 0;

  // Subcommands, in the order of the data flow.
  pk::llm::add_models_command(app, exit_code);
  pk::sandbox::add_sandbox_command(app, exit_code);
  pk::agent::add_agent_commands(app, exit_code);
  pk::run::add_run_command(app, exit_code);
  pk::bench::add_bench_commands(app, exit_code);
  pk::report::add_report_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const pk::config::config_error& e) {
    fmt::print(stderr, "pkagent: config error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "pkagent: {}\n", e.what());
    return 1;
  }
  return exit_code;
}
