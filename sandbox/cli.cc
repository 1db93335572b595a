#include "sandbox/cli.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/toml_reader.h"
#include "sandbox/config.h"
#include "sandbox/plan.h"
#include "sandbox/sandbox.h"

namespace pk::sandbox {

namespace {

struct cli_args {
  std::string workspace;
  std::vector<int> gpus;
  std::string config_file;
  std::string isolation;
  double timeout_seconds = 0;
  std::string memory, file_size, tmp_size, output;
  std::uint64_t cpu_seconds = 0, open_files = 0, processes = 0;
  bool json = false;
  bool dry_run = false;
  bool feed_stdin = false;
  std::vector<std::string> command;
};

nlohmann::json to_json(const captured_output& o) {
  return {{"text", o.text}, {"total_bytes", o.total_bytes}, {"truncated", o.truncated}};
}

nlohmann::json to_json(const result& r) {
  return {{"exit_code", r.exit_code},     {"signal", r.signal},
          {"timed_out", r.timed_out},     {"oom_killed", r.oom_killed},
          {"wall_seconds", r.wall_seconds}, {"cpu_seconds", r.cpu_seconds},
          {"stdout", to_json(r.out)},     {"stderr", to_json(r.err)},
          {"note", r.note},               {"status", r.shell_status()}};
}

std::string shell_quote(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
                           std::string::npos) {
    return text;
  }
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::uint64_t size_flag(const std::string& flag, const std::string& text) {
  try {
    return pk::config::parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(flag, fmt::format("'{}' is not a size such as 512M or 4G: {}", text, e.what()));
  }
}

std::string describe_end(const result& r) {
  if (r.timed_out) return fmt::format("timed out after {:.1f} s and was killed", r.wall_seconds);
  if (r.oom_killed) return "killed: out of memory (the sandbox's memory limit)";
  if (r.signal) return fmt::format("killed by signal {}", r.signal);
  return fmt::format("exit {}", r.exit_code);
}

int run_command(const cli_args& a, const std::vector<const CLI::Option*>& given) {
  auto was_given = [&](const char* name) {
    for (const auto* o : given) {
      if (o->check_name(name) && o->count() > 0) return true;
    }
    return false;
  };
  const std::filesystem::path config_file =
      a.config_file.empty() ? default_config_file() : std::filesystem::path(a.config_file);
  // The built-in defaults apply where the data home has no sandbox.toml, unless one was named.
  sandbox_config cfg = (!a.config_file.empty() || std::filesystem::exists(config_file)) ? load_config(config_file)
                                                                                          : sandbox_config{};
  spec s;
  s.limits = cfg.limits;
  s.isolation = cfg.isolation;
  if (was_given("--sandbox")) s.isolation = parse_isolation(a.isolation);
  if (was_given("--timeout")) s.limits.wall = std::chrono::milliseconds(std::llround(a.timeout_seconds * 1000));
  if (was_given("--memory")) s.limits.memory_bytes = size_flag("--memory", a.memory);
  if (was_given("--file-size")) s.limits.file_size_bytes = size_flag("--file-size", a.file_size);
  if (was_given("--tmp-size")) s.limits.tmp_bytes = size_flag("--tmp-size", a.tmp_size);
  if (was_given("--output")) s.limits.output_bytes = size_flag("--output", a.output);
  if (was_given("--cpu-seconds")) s.limits.cpu_seconds = a.cpu_seconds;
  if (was_given("--open-files")) s.limits.open_files = a.open_files;
  if (was_given("--processes")) s.limits.processes = a.processes;
  s.workspace = a.workspace.empty() ? std::filesystem::current_path() : std::filesystem::path(a.workspace);
  s.gpus = a.gpus;
  if (a.feed_stdin) s.stdin_data.assign(std::istreambuf_iterator<char>(std::cin), {});

  std::string command;
  for (const auto& part : a.command) command += (command.empty() ? "" : " ") + part;

  if (a.dry_run) {
    const plan p = make_plan(s, command);
    for (const auto& [name, value] : p.env) fmt::print("{}={} \\\n", name, shell_quote(value));
    for (std::size_t i = 0; i < p.argv.size(); ++i) {
      fmt::print("{}{}", i ? " " : "  ", shell_quote(p.argv[i]));
    }
    fmt::print("\n");
    for (const auto& [fd, data] : p.fd_data) fmt::print("# fd {}: {} bytes\n", fd, data.size());
    for (const auto& w : p.warnings) fmt::print("# warning: {}\n", w);
    return 0;
  }
  if (s.isolation == isolation::none) {
    fmt::print(stderr, "pkagent sandbox: WARNING: --sandbox=none: running UNSANDBOXED on the host: {}\n", command);
  }
  result r;
  try {
    r = run(s, command);
  } catch (const sandbox_error& e) {
    fmt::print(stderr, "pkagent sandbox: cannot create the sandbox: {}\n", e.what());
    return sandbox_failure_status;
  }
  if (a.json) {
    fmt::print("{}\n", to_json(r).dump(2));
  } else {
    std::fwrite(r.out.text.data(), 1, r.out.text.size(), stdout);
    std::fflush(stdout);
    std::fwrite(r.err.text.data(), 1, r.err.text.size(), stderr);
    std::string cut;
    if (r.out.truncated) cut += fmt::format("; stdout cut to head+tail of {} bytes", r.out.total_bytes);
    if (r.err.truncated) cut += fmt::format("; stderr cut to head+tail of {} bytes", r.err.total_bytes);
    fmt::print(stderr, "pkagent sandbox: {} ({:.3f} s wall, {:.3f} s CPU{}){}\n", describe_end(r), r.wall_seconds,
               r.cpu_seconds, cut, r.note.empty() ? "" : "\npkagent sandbox: note: " + r.note);
  }
  return r.shell_status();
}

}  // namespace

void add_sandbox_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<cli_args>();
  CLI::App* sub = app.add_subcommand(
      "sandbox",
      "Run one command in the sandbox (bubblewrap: read-only host, the workspace read-write at /workspace, "
      "no network, no host secrets, limits) and print its output and how it ended. The exit status mirrors "
      "the command's (128+signal when killed, 124 on timeout); 125 when no sandbox can be created.");
  std::vector<const CLI::Option*> options;
  options.push_back(sub->add_option("--workspace", a->workspace, "Directory bound read-write at /workspace (default: .)")
                        ->check(CLI::ExistingDirectory));
  options.push_back(sub->add_option("--gpus", a->gpus, "Host GPU indices lent to the command, e.g. 0,1 (default: none)")
                        ->delimiter(','));
  options.push_back(sub->add_option("--timeout", a->timeout_seconds, "Wall-clock timeout in seconds (0 = none)")
                        ->check(CLI::NonNegativeNumber));
  options.push_back(sub->add_option("--memory", a->memory, "Memory limit, e.g. 4G (0 = none)"));
  options.push_back(sub->add_option("--cpu-seconds", a->cpu_seconds, "CPU seconds per process (0 = none)"));
  options.push_back(sub->add_option("--file-size", a->file_size, "Largest file written, e.g. 16G (0 = none)"));
  options.push_back(sub->add_option("--open-files", a->open_files, "Open files per process (0 = inherit)"));
  options.push_back(sub->add_option("--processes", a->processes, "Processes and threads in the sandbox (0 = none)"));
  options.push_back(sub->add_option("--tmp-size", a->tmp_size, "Size of the private /tmp, e.g. 4G"));
  options.push_back(sub->add_option("--output", a->output, "Output kept per stream, head + tail, e.g. 1M"));
  options.push_back(sub->add_option("--config", a->config_file, "Defaults file (default: config/sandbox.toml)"));
  options.push_back(sub->add_option("--sandbox", a->isolation, "bwrap (default) or none (UNSANDBOXED, warns every time)")
                        ->check(CLI::IsMember({"bwrap", "none"})));
  sub->add_flag("--stdin", a->feed_stdin, "Feed pkagent's stdin to the command (default: it reads /dev/null)");
  sub->add_flag("--dry-run", a->dry_run, "Print the environment and bwrap command line instead of running");
  sub->add_flag("--json", a->json, "Print the result as JSON (output, exit code, timing, flags)");
  sub->add_option("command", a->command, "The command, run as `bash -lc \"CMD...\"` (put it after --)")
      ->required();
  sub->callback([a, options, &exit_code] { exit_code = run_command(*a, options); });
}

}  // namespace pk::sandbox
