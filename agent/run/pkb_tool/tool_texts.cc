#include "agent/run/pkb_tool/tool_texts.h"

#include <fmt/format.h>

namespace pk::pkb {
namespace fs = std::filesystem;

namespace {

// Exactly one help text per command: a missing one would leave the command out of `pkb help`,
// an extra one would describe a command that does not exist.
std::map<std::string, agent::prompt_template, std::less<>> load_help(const fs::path& dir,
                                                                     const std::vector<std::string_view>& commands) {
  std::map<std::string, agent::prompt_template, std::less<>> help;
  for (const std::string_view name : commands) {
    const fs::path file = dir / (std::string(name) + ".md");
    if (!fs::exists(file))
      throw agent::template_error(
          fmt::format("{}: missing: every pkb command needs its help text here", file.string()));
    help.emplace(std::string(name), agent::prompt_template::load(file, {}));
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() == ".md" && !help.contains(name))
      throw agent::template_error(fmt::format("{}: pkb has no command '{}'; remove the file or rename it after one "
                                              "of the commands", entry.path().string(), name));
  }
  return help;
}

}  // namespace

tool_texts tool_texts::load(const fs::path& prompts_dir, const std::vector<std::string_view>& commands) {
  const fs::path dir = prompts_dir / "pkb";
  auto text = [&](const char* name, std::set<std::string> vars) {
    return agent::prompt_template::load(dir / name, vars);
  };
  auto profile_text = [&](const char* name, std::set<std::string> vars) {
    return agent::prompt_template::load(dir / "profile" / name, vars);
  };
  tool_texts texts;
  texts.help = load_help(dir / "help", commands);
  texts.usage = text("usage.md", {"commands"});
  texts.unknown_command = text("unknown_command.md", {"command"});
  texts.bad_arguments = text("bad_arguments.md", {"command", "needs_command"});
  texts.bad_request = text("bad_request.md", {"unreadable", "reason"});
  texts.no_gpus = text("no_gpus.md", {"command", "over_cap", "reason"});
  texts.multicast_refused = text("multicast_refused.md", {"command", "findings"});
  texts.profile_unavailable = text("profile_unavailable.md", {"cpu"});
  texts.timed_out = text("timed_out.md", {"command", "seconds"});
  texts.submit_verdict = text("submit_verdict.md", {"ready"});
  texts.failing_rank = text("failing_rank.md", {});
  texts.failed = text("failed.md", {"command", "tool_fault", "reason"});
  texts.profile = {profile_text("trial.md", {}),
                   profile_text("summary.md", {"launches", "kernels", "kernel_us"}),
                   profile_text("more.md", {"count", "kernel_us"}),
                   profile_text("legend.md", {}),
                   profile_text("no_kernels.md", {"left_out"}),
                   profile_text("failed.md", {"exit_code", "counters_restricted"}),
                   profile_text("unreadable.md", {"reason"}),
                   profile_text("stopped.md", {"seconds"})};
  return texts;
}

}  // namespace pk::pkb
