// The scratch workspace of one process set, and what is staged in it. Each set's sandbox sees
// only its own workspace: the reference's holds the reference and the input generator, the
// candidate's holds the candidate and the input generator, never the reference. Files are
// copied, so a problem or worker edited mid-run cannot mix versions.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/device_kind.h"
#include "bench/eval/sets/rank_set.h"
#include "bench/suite/problem.h"

namespace pk::bench {

/// What a process set's sandbox must be given before its evaluation is known.
struct set_options {
  int world = 2;
  device_kind device = default_device;
  std::vector<int> gpus;             ///< host GPU indices, one per rank (empty on CPU)
  sandbox::isolation isolation = sandbox::isolation::bwrap;
  std::filesystem::path cache_base;  ///< the judge's caches (hidden inside; kr_torch is built there)
  /// Further host directories hidden inside, besides pkagent's tree and caches (a run's directory).
  std::vector<std::filesystem::path> hidden;
  bool prebuild_kr = false;          ///< build kr_torch's extension beforehand where it is offered
  bool keep_workspace = false;
  std::chrono::milliseconds wall_limit{600'000};
  std::function<void(const std::string&)> progress;

  /// Sets made from equal keys are interchangeable (a pool of warm sets keys on it).
  std::string key() const;
};

/// A new set's sandbox: a scratch workspace with the worker staged, a scratch JIT directory, kr_torch
/// offered on CUDA, the Python environment bound back, and pkagent's tree and caches hidden.
rank_set_spec make_set_spec(const set_options& o);

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
inline const std::filesystem::path staged_out = "out";

/// Stages the problem's input generator (upstream mode: the checkout's utils/ package, which PKB's
/// generator and solutions import); with `reference`, also reference.py.
void stage_problem(const std::filesystem::path& ws, const problem& p, bool reference);

/// Stages the candidate file; returns its path relative to `ws`.
std::filesystem::path stage_candidate(const std::filesystem::path& ws, const std::filesystem::path& solution);

}  // namespace pk::bench
