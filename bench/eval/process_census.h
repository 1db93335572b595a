// Processes a candidate left running. A rank process is allowed its own threads; anything else
// alive in its set's sandbox besides the ranks, their supervisor and the sandbox's init was
// started by the candidate and outlived the call that started it: background work that could run
// while the reference is timed, or rewrite files after the candidate's turn.
//
// Counted from the host's /proc (not from inside the sandbox, where the candidate could lie): the
// processes that share the ranks' pid namespace, or, without a sandbox, the ranks' descendants.
#pragma once

#include <string>
#include <vector>

namespace pk::bench {

/// Descriptions ("pid 123: python3 -c ...") of the processes besides `rank_pids` (host pids),
/// their parent and the namespace's init; `sandboxed` says whether they have a pid namespace of
/// their own. Empty when the rank pids are unknown (0).
std::vector<std::string> stray_processes(const std::vector<int>& rank_pids, bool sandboxed);

}  // namespace pk::bench
