// An episode's output directory (OUT/transcript.jsonl, OUT/workspace/, earlier attempts as
// OUT/transcript.attempt-N.jsonl): starting one, and resuming one whose transcript is unfinished.
#pragma once

#include <filesystem>
#include <optional>

#include "agent/episode.h"
#include "agent/transcript.h"

namespace pk::agent {

/// The transcript to resume from in `out_dir`: transcript.jsonl, or the newest attempt when a
/// crash came between renaming it and writing the new one. nullopt when there is none.
std::optional<std::filesystem::path> latest_transcript(const std::filesystem::path& out_dir);

/// The task as recorded in a transcript header (text, workspace, check script).
task_spec task_from_header(const json& header);

/// Starts a new episode in `out_dir`, which must not hold a transcript yet: copies the task's
/// workspace to out_dir/workspace and runs.
episode_result start_episode(const task_spec& task, episode_options opt, llm::client* live,
                             const std::filesystem::path& out_dir);

/// Continues the unfinished episode recorded in `old`: keeps it as transcript.attempt-N.jsonl,
/// restores the workspace from the task, replays the recorded replies (re-executing their
/// actions, no model calls) and goes on live. `opt.cfg` should be the recorded config.
episode_result resume_episode(const transcript_file& old, const task_spec& task, episode_options opt,
                              llm::client* live, const std::filesystem::path& out_dir);

/// Replays the first `steps` recorded replies of `from` in a fresh copy of the task's workspace
/// in `out_dir`, then continues with `live` (null: stop when they run out). Used by fork and
/// by replay; the new transcript names `parent`.
episode_result replay_episode(const transcript_file& from, int steps, const task_spec& task,
                              episode_options opt, llm::client* live,
                              const std::filesystem::path& out_dir);

}  // namespace pk::agent
