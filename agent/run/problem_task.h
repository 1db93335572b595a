// The task of one problem as the model sees it: PROBLEM.md rendered from prompts/problem/, and the
// directory every episode of that problem starts from (PROBLEM.md, reference.py, a solution.py to
// write, the kernels_runtime headers and docs when they exist).
#pragma once

#include <filesystem>
#include <string>

#include "bench/device_kind.h"
#include "bench/suite/machine.h"
#include "bench/suite/problem.h"

namespace pk::run {

/// What PROBLEM.md states beyond the problem's own files.
struct problem_view {
  int world = 2;
  bench::device_kind device = bench::default_device;
  int check_trials = 2;
  int final_trials = 5;
  bench::machine machine;  ///< the GPUs the episode leases, and the spec its bound uses (if any)
  bool kernels_runtime = false;  ///< the task directory carries kernels_runtime's headers and docs
};

/// The `def solution(...)` header of a reference source, on one line ("" when there is none).
std::string signature_of(const std::string& source);
/// The module docstring of a Python source ("" when there is none).
std::string docstring_of(const std::string& source);

/// The problem's reference.py without its trailing newlines, as PROBLEM.md and the demo show it.
std::string reference_text(const bench::problem& problem);

/// Renders prompts_dir/problem/problem.md. Throws agent::template_error for a bad template.
std::string render_problem(const bench::problem& problem, const problem_view& v,
                           const std::filesystem::path& prompts_dir);

/// Writes the task directory `dir` (replacing it): PROBLEM.md = problem_md, reference.py, the
/// solution.py stub, and kernels_runtime/ + kernels_runtime.md when the data tree has them.
/// Returns whether kernels_runtime was included.
bool write_task_dir(const std::filesystem::path& dir, const bench::problem& problem, const std::string& problem_md,
                    const std::filesystem::path& prompts_dir);

/// write_task_dir, unless `dir` already holds this PROBLEM.md: resumed episodes check the task's
/// content hash, so an unchanged task directory is left as it is.
void update_task_dir(const std::filesystem::path& dir, const bench::problem& problem, const std::string& problem_md,
                     const std::filesystem::path& prompts_dir);

/// Whether the data tree holds kernels_runtime headers to hand to the model.
bool kernels_runtime_available();

}  // namespace pk::run
