// The simplest evaluator: a task's check script, run in a fresh sandbox on the submitted
// workspace; exit 0 scores 1. The benchmark's judge replaces it for real problems.
#pragma once

#include <filesystem>

#include "agent/episode.h"

namespace pk::agent {

/// An evaluator running `script` (fed to `bash -s` on stdin, so the model never saw it) under
/// `base` with the workspace at /workspace and a wall-time limit of `timeout_seconds`.
evaluator check_script_evaluator(const std::filesystem::path& script, const sandbox::spec& base,
                                 double timeout_seconds);

}  // namespace pk::agent
