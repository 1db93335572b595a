// Replaying and forking an episode of `pkagent run`: its pkb tool attached again for the same
// problem, leasing this host's GPUs (or CPU evaluation slots with --device cpu), so that the kept
// steps re-execute as they ran.
#pragma once

#include <memory>

#include "agent/cli.h"

namespace pk::run {

/// The agent's tool_attacher for run episodes. A run episode is known by its header's
/// `tools.pkb` (pkb_binding.h), or, in a transcript that predates it, by its task directory
/// OUT/tasks/<id>_<stem> beside OUT/run.json. Returns null for any other episode. Throws
/// std::invalid_argument when the commands cannot re-execute here, saying why and what to do
/// (a cuda run on a host without GPUs, too few GPUs, a problem the suite no longer has).
std::unique_ptr<agent::attached_tools> attach_run_tools(const agent::replay_request& req,
                                                         agent::episode_options& opt);

}  // namespace pk::run
