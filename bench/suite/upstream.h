// Upstream mode: the problems of a ParallelKernelBench (PKB) checkout, judged by our evaluator.
// A checkout holds reference/<id>_<stem>.py (the references) and utils/input_output_tensors.py
// (PKB's one input generator, create_input_tensor(rank, world_size, problem_id, (M, N), dtype,
// trial, device)). The rank worker imports that generator from the checkout at run time, so our
// ports and our judge can be checked against the original benchmark. Defaults are PKB's: M = N =
// 1024, bfloat16, atol = rtol = 1e-2, any world size (the generator refuses what it cannot build).
#pragma once

#include <filesystem>
#include <vector>

#include "bench/suite/problem.h"

namespace pk::bench {

/// The file of a checkout that holds PKB's input generator, relative to its root.
inline constexpr const char* pkb_generator_file = "utils/input_output_tensors.py";

/// True when `root` has a reference/ directory and PKB's input generator.
bool is_pkb_checkout(const std::filesystem::path& root);

/// Every reference/<id>_<stem>.py of the checkout as a problem (upstream_root set), sorted by id
/// then file name (PKB resolves a bare id to the first such file). Throws std::invalid_argument
/// naming what is missing when `root` is not a checkout.
std::vector<problem> load_pkb_suite(const std::filesystem::path& root);

}  // namespace pk::bench
