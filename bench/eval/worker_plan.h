// The problem as the rank worker receives it in its plan: the part of the judge's protocol that
// describes the problem's format (bench/worker/problem_api.py reads it).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "bench/suite/problem.h"

namespace pk::bench {

/// Inputs recorded for the judge above this many bytes per tensor are stored as a digest (shape,
/// dtype, hash) instead of their bytes; the worker receives it in the plan.
inline constexpr std::uint64_t input_digest_threshold_bytes = 64ull << 20;

/// What the rank worker needs to know of the problem's format at world size `world` (the plan's
/// "problem" object without the staged file paths): id, name, dtype, shape, mesh (axes and sizes, or
/// null), args (name, type, dtype, group, in_place per positional argument), in_place (positions),
/// judge_data (inputs.py functions the reference run records for tie-aware comparisons),
/// digest_above_bytes and second_distribution (what each kind of draw becomes in the trial that draws
/// from it, or null). docs/problem_format.md, "What the worker receives".
nlohmann::json worker_plan(const problem& p, int world);

}  // namespace pk::bench
