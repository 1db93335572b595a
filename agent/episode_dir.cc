#include "agent/episode_dir.h"

#include <regex>

#include <fmt/format.h>

#include "agent/workspace.h"

namespace pk::agent {
namespace fs = std::filesystem;
namespace {

void require_same_task(const json& header, const task_spec& task) {
  std::string recorded = header.at("task").at("content_sha256");
  std::string now = task_hash(task.text, task.workspace);
  if (recorded != now)
    throw std::runtime_error(fmt::format(
        "the task changed since the transcript was recorded: its content hash was {} and is now "
        "{} ({}); restore the recorded workspace or pass it with --workspace",
        recorded.substr(0, 12), now.substr(0, 12), task.workspace.string()));
}

int attempt_number(const fs::path& p) {
  static const std::regex re(R"(transcript\.attempt-(\d+)\.jsonl)");
  std::smatch m;
  std::string name = p.filename().string();
  return std::regex_match(name, m, re) ? std::stoi(m[1]) : 0;
}

}  // namespace

std::optional<fs::path> latest_transcript(const fs::path& out_dir) {
  if (fs::exists(out_dir / "transcript.jsonl")) return out_dir / "transcript.jsonl";
  std::optional<fs::path> best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out_dir, ec))
    if (attempt_number(e.path()) > (best ? attempt_number(*best) : 0)) best = e.path();
  return best;
}

task_spec task_from_header(const json& header) {
  const json& t = header.at("task");
  return {t.at("id"), t.at("text"), t.at("workspace").get<std::string>(),
          t.at("check").is_null() ? fs::path() : fs::path(t.at("check").get<std::string>())};
}

episode_result start_episode(const task_spec& task, episode_options opt, llm::client* live,
                             const fs::path& out_dir) {
  if (latest_transcript(out_dir))
    throw std::runtime_error(fmt::format("{}: already holds an episode", out_dir.string()));
  fs::create_directories(out_dir);
  copy_workspace(task.workspace, out_dir / "workspace");
  return run_episode(task, opt, live, out_dir);
}

episode_result resume_episode(const transcript_file& old, const task_spec& task, episode_options opt,
                              llm::client* live, const fs::path& out_dir) {
  require_same_task(old.header, task);
  int steps = old.complete_steps();
  // The earlier attempt stays for the audit; its last event's time is wall time already spent.
  int n = 1;
  for (const auto& e : fs::directory_iterator(out_dir)) n = std::max(n, attempt_number(e.path()) + 1);
  fs::path kept = out_dir / fmt::format("transcript.attempt-{}.jsonl", n);
  if (old.path != kept) fs::rename(old.path, kept);
  opt.used_before.wall_seconds = old.events.empty() ? 0 : old.events.back().value("t", 0.0);
  opt.replay = old.responses(steps);
  opt.parent = {{"resumed_from", kept.filename().string()}, {"replayed_steps", steps},
                {"original_parent", old.header.value("parent", json())}};
  copy_workspace(task.workspace, out_dir / "workspace");
  return run_episode(task, opt, live, out_dir);
}

episode_result replay_episode(const transcript_file& from, int steps, const task_spec& task,
                              episode_options opt, llm::client* live, const fs::path& out_dir) {
  require_same_task(from.header, task);
  if (steps > from.complete_steps())
    throw std::runtime_error(fmt::format("{}: has {} complete steps, not {}", from.path.string(),
                                         from.complete_steps(), steps));
  if (latest_transcript(out_dir))
    throw std::runtime_error(fmt::format("{}: already holds an episode; choose another --out",
                                         out_dir.string()));
  fs::create_directories(out_dir);
  opt.replay = from.responses(steps);
  opt.parent = {{"transcript", fs::absolute(from.path).string()}, {"step", steps}};
  copy_workspace(task.workspace, out_dir / "workspace");
  return run_episode(task, opt, live, out_dir);
}

}  // namespace pk::agent
