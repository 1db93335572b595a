// pkagent: one binary, one subcommand per job. Each component adds its own subcommands
// (sandbox/cli.h, bench/cli.h, agent/cli.h ...); this file assembles them and is the one place
// where an error becomes an exit status: the table below, printed by `pkagent --help` and
// documented in docs/cli.md. Commands set only the statuses of their own answers (0, 1, or the
// sandboxed command's own); everything else reaches here as an exception.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/audit/episode_page.h"
#include "agent/cli.h"
#include "agent/llm/llm.h"
#include "agent/prompt_template.h"
#include "agent/run/cli.h"
#include "agent/run/replay_tools.h"
#include "bench/cli.h"
#include "bench/report/cli.h"
#include "config/nearest.h"
#include "config/toml_reader.h"
#include "pkagent/build_info.h"
#include "sandbox/cli.h"
#include "sandbox/spec.h"

namespace {

namespace status {
constexpr int ok = 0;
constexpr int bad_input = 2;
constexpr int failure = 3;
constexpr int no_sandbox = 125;
}  // namespace status

struct status_row {
  std::string_view code;
  std::string_view meaning;
};

// Every command follows this table; `pkagent sandbox` adds its command's own statuses.
constexpr status_row status_table[] = {
    {"0", "success (eval: the verdict is correct; episode: the model submitted; replay: every step matches; "
          "scan-multicast: nothing found; run: every episode ran and was scored)"},
    {"1", "a negative answer: the verdict is not correct, the episode ended without a submission, a replayed "
          "step differs, multicast was found, episodes of a run failed to run"},
    {"2", "bad input: an unknown command or option, a bad value, config file, prompt template or problem, a "
          "file that cannot be read or written, an unknown model or an unset key variable"},
    {"3", "failure not caused by the input: the evaluator, a reference, the model provider or pkagent itself "
          "failed (the message says which; run: every episode it scored ended in model_error)"},
    {"124", "sandbox: the command ran past --timeout and was killed"},
    {"125", "no sandbox can be created (bubblewrap missing, no user namespaces, a GPU that does not exist); "
            "the message names the fix"},
    {"126, 127", "sandbox: the command cannot be executed / was not found"},
    {"128+N", "sandbox: the command was killed by signal N (any other status is the command's own)"},
};

std::string status_table_text() {
  std::string out = "Exit status (all commands):\n";
  for (const auto& [code, meaning] : status_table) out += fmt::format("  {:<9} {}\n", code, meaning);
  return out;
}

// "pkagent" or "pkagent eval": the command that ran (or failed to parse).
std::string command_name(const CLI::App& app) {
  const auto chosen = app.get_subcommands();
  return chosen.empty() ? "pkagent" : "pkagent " + chosen.front()->get_name();
}

std::vector<std::string> option_names(const CLI::App& c) {
  std::vector<std::string> names;
  for (const CLI::Option* o : c.get_options()) {
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
    for (const auto& n : o->get_snames()) names.push_back("-" + n);
  }
  return names;
}

bool looks_like_number(const std::string& word) {
  return word.size() > 1 && word[0] == '-' && (std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

// "did you mean 'a'?", or "'a' or 'b'?" when a typo is as near to both.
std::string did_you_mean(const std::vector<std::string>& words) {
  return fmt::format("did you mean '{}'?", fmt::join(words, "' or '"));
}

// An unknown command or option left over by the parse, named with the nearest known one. CLI11
// reports what it checks first (often a required option), so this is looked for before its message.
std::optional<std::string> misspelling(const CLI::App& app) {
  const auto chosen = app.get_subcommands();
  if (chosen.empty()) {
    for (const std::string& word : app.remaining()) {
      if (word.empty() || word[0] == '-') continue;
      std::vector<std::string> commands;
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (!sub->get_group().empty()) commands.push_back(sub->get_name());
      }
      const auto near = pk::config::nearest_all(word, commands);
      return fmt::format("unknown command '{}'; {}", word,
                         near.empty() ? fmt::format("the commands are: {}", fmt::join(commands, ", "))
                                      : did_you_mean(near));
    }
  }
  const CLI::App& c = chosen.empty() ? app : *chosen.front();
  for (const std::string& word : c.remaining()) {
    if (word.size() < 2 || word[0] != '-' || looks_like_number(word)) continue;
    const std::string name = word.substr(0, word.find('='));
    const auto near = pk::config::nearest_all(name, option_names(c));
    return fmt::format("unknown option '{}'{}", name, near.empty() ? "" : "; " + did_you_mean(near));
  }
  return std::nullopt;
}

void say(const CLI::App& app, const std::string& message) {
  fmt::print(stderr, "{}: {}\n", command_name(app), message);
}

// Errors of the input: a bad config, template, value or path, an unknown model or unset key.
bool is_bad_input(const std::exception& e) {
  if (const auto* llm = dynamic_cast<const pk::llm::llm_error*>(&e))
    return llm->what_kind() == pk::llm::llm_error::kind::config;
  return dynamic_cast<const pk::config::config_error*>(&e) || dynamic_cast<const pk::agent::template_error*>(&e) ||
         dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::filesystem::filesystem_error*>(&e);
}

// The one mapping from an error to an exit status (the table above).
int exit_status(const CLI::App& app, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    say(app, fmt::format("{}\nRun `{} --help` for the options.", misspelling(app).value_or(e.what()),
                         command_name(app)));
    return status::bad_input;
  } catch (const pk::sandbox::sandbox_error& e) {
    say(app, fmt::format("cannot create the sandbox: {}", e.what()));
    return status::no_sandbox;
  } catch (const std::exception& e) {
    say(app, e.what());
    return is_bad_input(e) ? status::bad_input : status::failure;
  } catch (...) {
    say(app, "an unknown error");
    return status::failure;
  }
}

// The words after the first `--` of `pkagent sandbox`: the command's, taken off before CLI11
// parses the rest (a list-valued option such as --gpus would take `--` and the words after it).
std::vector<std::string> split_command(std::vector<std::string>& args) {
  const auto first_word = std::find_if(args.begin(), args.end(), [](const auto& a) { return a.empty() || a[0] != '-'; });
  if (first_word == args.end() || *first_word != "sandbox") return {};
  const auto dashes = std::find(first_word, args.end(), "--");
  if (dashes == args.end()) return {};
  std::vector<std::string> command(dashes + 1, args.end());
  args.erase(dashes, args.end());
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pkagent: an LLM agent that writes fast multi-GPU CUDA kernels, and the judge that scores them",
               "pkagent"};
  app.set_version_flag("--version", fmt::format("pkagent {} ({})", pk::build_info::version,
                                                pk::build_info::git_commit));
  app.require_subcommand(1);
  app.footer(status_table_text() + "Details: docs/cli.md");
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::vector<std::string> command = split_command(args);
  int exit_code = status::ok;

  // Subcommands, in the order of the data flow.
  pk::sandbox::add_sandbox_command(app, exit_code, command);
  pk::agent::add_agent_commands(app, exit_code, pk::run::attach_run_tools, [](const std::filesystem::path& file) {
    return pk::audit::render_episode_page(pk::audit::load_episode(file));
  });
  pk::run::add_run_command(app, exit_code);
  pk::bench::add_bench_commands(app, exit_code);
  pk::report::add_report_command(app, exit_code);

  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (...) {
    return exit_status(app, std::current_exception());
  }
  return exit_code;
}
