// The Python with torch (config::python(), often a venv under $HOME, which the sandbox hides)
// made visible in a sandbox: its prefix and its interpreter's prefix bound read-only at their
// own paths, and its bin directory first on PATH, so `python3` in the agent's shell and in
// `pkb run` is the evaluator's.
#pragma once

#include "sandbox/sandbox.h"

namespace pk::pkb {

void add_python(sandbox::spec& s);

}  // namespace pk::pkb
