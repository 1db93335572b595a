// The suite: every problem of a directory in our own format (problem.h), or of a ParallelKernelBench
// checkout (upstream.h). The one place that tells the two formats apart, so neither loader needs the
// other.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "bench/suite/problem.h"

namespace pk::bench {

/// Every problem under `root`, sorted by id: the directories holding a problem.toml, or, when
/// `root` is a ParallelKernelBench checkout, its references (upstream mode). Throws
/// std::invalid_argument when `root` is neither.
std::vector<problem> load_suite(const std::filesystem::path& root);

/// The suite directory: bench/problems of the pkagent data tree.
std::filesystem::path default_suite_dir();

/// Finds a problem by id ("13"), stem ("gemm_allreduce") or directory name ("13_gemm_allreduce").
/// Throws std::invalid_argument listing the known ids when there is none.
const problem& find_problem(const std::vector<problem>& suite, std::string_view key);

}  // namespace pk::bench
