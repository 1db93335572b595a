// Compares what a candidate returned with what the reference returned, per rank, recursively
// through tuples, lists and dicts, and checks that it left its inputs as the reference did.
//
// Rules (PKB's, tightened where PKB is weak; bench/README.md lists the differences): structure
// must match (tuple and list are interchangeable, as in PKB; dict key sets must be equal); a
// tensor's shape, then its dtype must match; NaN or Inf where the reference has a finite value
// fails, NaN where the reference has NaN passes; floating values pass when
// |got - want| <= atol + rtol * |want| (complex: on the complex difference); integer and bool
// tensors must be equal; plain numbers use the same tolerance, everything else ==.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/tensor_file.h"

namespace pk::bench {

struct tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

/// The comparison of one leaf (a tensor or a plain value).
struct leaf_comparison {
  std::string path;        ///< e.g. "output", "output[1]", "output['loss']"
  bool ok = true;
  std::string message;     ///< why it failed, naming shapes/dtypes/values; empty when ok
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;   ///< elements outside the tolerance (non-finite ones included)
  std::uint64_t nonfinite = 0;    ///< NaN/Inf where the reference is finite
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::string first_index;        ///< e.g. "[3, 17]" of the first mismatch
  std::string first_got, first_want;
};

struct comparison {
  bool ok = true;
  std::vector<leaf_comparison> leaves;
  /// The first failing leaf's message, prefixed with its path; empty when ok.
  std::string first_failure() const;
};

/// Compares the candidate's tree `got` (in file `gf`) with the reference's `want` (in `wf`).
comparison compare_outputs(const nlohmann::json& got, const tensor_file& gf, const nlohmann::json& want,
                           const tensor_file& wf, tolerance tol);

/// Checks the candidate's inputs after its call (`got`) against the reference's inputs before
/// the call (`want`): every tensor leaf the reference left unchanged (mutated[i] false, in
/// tensor_file order) must still be bitwise the same.
comparison compare_unchanged_inputs(const nlohmann::json& got, const tensor_file& gf, const nlohmann::json& want,
                                    const tensor_file& wf, const std::vector<bool>& mutated);

}  // namespace pk::bench
