// The episode's workspace: a private copy of the task's directory, and the hash that identifies
// a task's content (so a replay can tell that the task it re-runs is the one recorded).
#pragma once

#include <filesystem>
#include <string>

namespace pk::agent {

/// Replaces `to` with a copy of `from` (recursively; symlinks copied as links).
void copy_workspace(const std::filesystem::path& from, const std::filesystem::path& to);

/// sha256 over the task text and every file under `workspace` (relative path and content, in
/// path order), as hex.
std::string task_hash(const std::string& text, const std::filesystem::path& workspace);

}  // namespace pk::agent
