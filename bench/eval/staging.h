// The scratch workspace of one process set, and what is staged in it. Each set's sandbox sees
// only its own workspace: the reference's holds the reference and the input generator, the
// candidate's holds the candidate and the input generator, never the reference. Files are
// copied, so a problem or worker edited mid-run cannot mix versions.
#pragma once

#include <filesystem>

#include "bench/eval/problem.h"

namespace pk::bench {

/// A private scratch directory, removed when it goes out of scope unless kept.
class scratch_dir {
 public:
  explicit scratch_dir(bool keep);
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool keep_;
};

/// Where the worker finds its files, relative to a staged workspace.
inline const std::filesystem::path staged_worker = "worker/rank_worker.py";
inline const std::filesystem::path staged_plan = "plan.json";
inline const std::filesystem::path staged_out = "out";

/// Stages the worker and the problem's input generator (upstream mode: the checkout's utils/
/// package, which PKB's generator and solutions import); with `reference`, also reference.py.
void stage_problem(const std::filesystem::path& ws, const problem& p, bool reference);

/// Stages the candidate file; returns its path relative to `ws`.
std::filesystem::path stage_candidate(const std::filesystem::path& ws, const std::filesystem::path& solution);

}  // namespace pk::bench
