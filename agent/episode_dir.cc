#include "agent/episode_dir.h"

#include <regex>

#include <fmt/format.h>

#include "agent/workspace.h"

namespace pk::agent {
namespace fs = std::filesystem;
namespace {

// Only agent episodes record where their files came from; a zero-shot transcript has nothing to
// resume or replay.
const task_origin& task_origin_of(const header_event& h) {
  if (!h.task.origin)
    throw std::runtime_error(fmt::format("the transcript of task {} is a {} one: it records no workspace to "
                                         "resume or replay from", h.task.id, to_string(h.mode)));
  return *h.task.origin;
}

void require_same_task(const json& header, const task_spec& task) {
  const std::string recorded = task_origin_of(event_as<header_event>(header)).content_sha256;
  const std::string now = task_hash(task.text, task.workspace);
  if (recorded != now)
    throw std::runtime_error(fmt::format(
        "the task changed since the transcript was recorded: its content hash was {} and is now "
        "{} ({}); restore the recorded workspace or pass it with --workspace",
        recorded.substr(0, 12), now.substr(0, 12), task.workspace.string()));
}

int attempt_number(const fs::path& file) {
  static const std::regex re(R"(transcript\.attempt-(\d+)\.jsonl)");
  std::smatch m;
  std::string name = file.filename().string();
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
  const header_event h = event_as<header_event>(header);
  const task_origin& origin = task_origin_of(h);
  return {h.task.id, h.task.text, origin.workspace, origin.check ? fs::path(*origin.check) : fs::path()};
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
  opt.used_before.wall_seconds = old.seconds();
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
