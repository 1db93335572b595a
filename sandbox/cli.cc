#include "sandbox/cli.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
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

namespace fs = std::filesystem;

// Flags left unset keep the value of the config file (or its built-in default).
struct cli_args {
  fs::path workspace;
  std::vector<int> gpus;
  fs::path config_file;
  std::optional<enum isolation> isolation;
  std::optional<double> timeout_seconds;
  std::optional<std::string> memory, file_size, tmp_size, output;
  std::optional<std::uint64_t> cpu_seconds, open_files, processes;
  bool json = false;
  bool dry_run = false;
  bool feed_stdin = false;
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

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

void set_size(std::uint64_t& target, const char* flag, const std::optional<std::string>& text) {
  if (!text) return;
  try {
    target = pk::config::parse_size(*text);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(flag, fmt::format("'{}' is not a size such as 512M or 4G: {}", *text, e.what()));
  }
}

std::string describe_end(const result& r) {
  if (r.timed_out) return fmt::format("timed out after {:.1f} s and was killed", r.wall_seconds);
  if (r.oom_killed) return "killed: out of memory (the sandbox's memory limit)";
  if (r.signal) return fmt::format("killed by signal {}", r.signal);
  return fmt::format("exit {}", r.exit_code);
}

spec spec_from(const cli_args& a) {
  const fs::path config_file = a.config_file.empty() ? default_config_file() : a.config_file;
  // The built-in defaults apply where the data home has no sandbox.toml, unless one was named.
  const sandbox_config cfg =
      (!a.config_file.empty() || fs::exists(config_file)) ? load_config(config_file) : sandbox_config{};
  spec s;
  s.limits = cfg.limits;
  s.isolation = a.isolation.value_or(cfg.isolation);
  if (a.timeout_seconds) s.limits.wall = std::chrono::milliseconds(std::llround(*a.timeout_seconds * 1000));
  set_size(s.limits.memory_bytes, "--memory", a.memory);
  set_size(s.limits.file_size_bytes, "--file-size", a.file_size);
  set_size(s.limits.tmp_bytes, "--tmp-size", a.tmp_size);
  set_size(s.limits.output_bytes, "--output", a.output);
  s.limits.cpu_seconds = a.cpu_seconds.value_or(s.limits.cpu_seconds);
  s.limits.open_files = a.open_files.value_or(s.limits.open_files);
  s.limits.processes = a.processes.value_or(s.limits.processes);
  s.workspace = a.workspace.empty() ? fs::current_path() : a.workspace;
  s.gpus = a.gpus;
  if (a.feed_stdin) s.stdin_data.assign(std::istreambuf_iterator<char>(std::cin), {});
  return s;
}

void print_plan(const plan& p) {
  for (const auto& [name, value] : p.env) fmt::print("{}={} \\\n", name, shell_quote(value));
  fmt::print("  {}\n", shell_words(p.argv));
  for (const auto& [fd, data] : p.fd_data) fmt::print("# fd {}: {} bytes\n", fd, data.size());
  for (const auto& w : p.warnings) fmt::print("# warning: {}\n", w);
}

void print_result(const result& r) {
  std::fwrite(r.out.text.data(), 1, r.out.text.size(), stdout);
  std::fflush(stdout);
  std::fwrite(r.err.text.data(), 1, r.err.text.size(), stderr);
  std::string cut;
  if (r.out.truncated) cut += fmt::format("; stdout cut to head+tail of {} bytes", r.out.total_bytes);
  if (r.err.truncated) cut += fmt::format("; stderr cut to head+tail of {} bytes", r.err.total_bytes);
  fmt::print(stderr, "pkagent sandbox: {} ({:.3f} s wall, {:.3f} s CPU{}){}\n", describe_end(r), r.wall_seconds,
             r.cpu_seconds, cut, r.note.empty() ? "" : "\npkagent sandbox: note: " + r.note);
}

// One word is a shell command line (bash -lc); several are an argv, exec'd with no shell.
int run_command(const cli_args& a, const std::vector<std::string>& command) {
  if (command.empty())
    throw std::invalid_argument("give the command after --, e.g. pkagent sandbox -- make test");
  const spec s = spec_from(a);
  const bool shell = command.size() == 1;
  if (a.dry_run) {
    print_plan(shell ? make_plan(s, command.front()) : make_argv_plan(s, command));
    return 0;
  }
  if (s.isolation == isolation::none) {
    fmt::print(stderr, "pkagent sandbox: WARNING: --sandbox=none: running UNSANDBOXED on the host: {}\n",
               shell ? command.front() : shell_words(command));
  }
  const result r = shell ? run(s, command.front()) : run_argv(s, command);
  if (a.json) fmt::print("{}\n", to_json(r).dump(2));
  else print_result(r);
  return r.shell_status();
}

CLI::Option* add_isolation(CLI::App& c, std::function<void(enum isolation)> set, const std::string& help) {
  return c
      .add_option_function<std::string>(
          "--sandbox", [set](const std::string& name) { set(parse_isolation(name)); }, help)
      ->type_name("bwrap|none")
      ->check([](const std::string& name) {
        try {
          parse_isolation(name);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      });
}

}  // namespace

CLI::Option* add_isolation_option(CLI::App& c, enum isolation& target, const std::string& help) {
  return add_isolation(c, [&target](enum isolation i) { target = i; }, help);
}

CLI::Option* add_isolation_option(CLI::App& c, std::optional<enum isolation>& target, const std::string& help) {
  return add_isolation(c, [&target](enum isolation i) { target = i; }, help);
}

void add_sandbox_command(CLI::App& app, int& exit_code, const std::vector<std::string>& command) {
  auto a = std::make_shared<cli_args>();
  CLI::App* sub = app.add_subcommand(
      "sandbox",
      "Run one command in the sandbox (bubblewrap: read-only host, the workspace read-write at /workspace, "
      "no network, no host secrets, limits) and print its output and how it ended.");
  sub->footer(
      "Usage: pkagent sandbox [OPTIONS] -- CMD [ARGS...]\n"
      "Everything after -- is the command's, whatever options come before it. One word is a shell command "
      "line, run by `bash -lc` (pkagent sandbox -- 'make && ./test > log'); several words are exec'd as "
      "they are, with no shell (pkagent sandbox -- cat 'a file with spaces').\n"
      "Exit status: the command's own; 128+N when signal N killed it, 124 on timeout, 126/127 when it cannot "
      "be executed / is not found; 125 when no sandbox can be created; 2 for bad options or config.");
  sub->add_option("--workspace", a->workspace, "Directory bound read-write at /workspace (default: .)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--gpus", a->gpus, "Host GPU indices lent to the command, e.g. 0,1 (default: none)")->delimiter(',');
  sub->add_option("--timeout", a->timeout_seconds, "Wall-clock timeout in seconds (0 = none)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--memory", a->memory, "Memory limit, e.g. 4G (0 = none)");
  sub->add_option("--cpu-seconds", a->cpu_seconds, "CPU seconds per process (0 = none)");
  sub->add_option("--file-size", a->file_size, "Largest file written, e.g. 16G (0 = none)");
  sub->add_option("--open-files", a->open_files, "Open files per process (0 = inherit)");
  sub->add_option("--processes", a->processes, "Processes and threads in the sandbox (0 = none)");
  sub->add_option("--tmp-size", a->tmp_size, "Size of the private /tmp, e.g. 4G");
  sub->add_option("--output", a->output, "Output kept per stream, head + tail, e.g. 1M");
  sub->add_option("--config", a->config_file, "Defaults file (default: config/sandbox.toml)");
  add_isolation_option(*sub, a->isolation, "bwrap (default) or none (UNSANDBOXED, warns every time)");
  sub->add_flag("--stdin", a->feed_stdin, "Feed pkagent's stdin to the command (default: it reads /dev/null)");
  sub->add_flag("--dry-run", a->dry_run, "Print the environment and bwrap command line instead of running");
  sub->add_flag("--json", a->json, "Print the result as JSON (output, exit code, timing, flags)");
  sub->callback([a, &command, &exit_code] { exit_code = run_command(*a, command); });
}

}  // namespace pk::sandbox
