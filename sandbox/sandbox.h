// The sandbox: runs one command inside bubblewrap with a read-only host, a private workspace,
// a private loopback-only network, hard limits and exactly the GPUs it was lent.
//
// Spec-then-execute: a `spec` is plain data (spec.h); make_plan() (plan.h) turns it into a bwrap
// argv that tests can inspect; `run()` executes a plan and always returns a `result` for anything
// the command did (exit, signal, timeout, OOM). Only a sandbox that cannot be set up at all (bwrap
// missing, no namespaces) is an error, reported as `sandbox_error` with the fix in its message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sandbox/spec.h"

namespace pk::sandbox {

/// Runs the shell command line `line` (`bash -lc LINE`: pipes, redirections, globs) in a fresh
/// sandbox and waits for it (or its timeout).
result run(const spec& s, const std::string& line);

/// Runs `argv` as given, with no shell between (each word reaches the program unchanged, the
/// program is looked up on the sandbox's PATH), in a fresh sandbox. A program that cannot be
/// started is a result, as in a shell: exit code 127 when not found, 126 when not executable.
result run_argv(const spec& s, const std::vector<std::string>& argv);

/// Checks once that bwrap exists and can create the namespaces; nullopt when it can, else the
/// reason with the fix (install bubblewrap, enable user namespaces, or --sandbox=none).
std::optional<std::string> unavailable_reason();

}  // namespace pk::sandbox
