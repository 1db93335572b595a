// Compares what a candidate returned with what the reference returned, per rank, recursively
// through tuples, lists and dicts, and checks that it left its inputs as the reference did.
//
// Structure must match (tuple and list are interchangeable, as in PKB; dict key sets must be equal);
// a tensor's shape, then its dtype must match; then each leaf is compared by the rule its problem
// declares for it (compare_rule.h; docs/problem_format.md lists the modes and when to use which).
// Under every mode NaN or Inf where the reference has a finite value fails, and NaN where the
// reference has NaN passes. Plain numbers use the leaf's tolerance (allclose) or equality.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/eval/tensor_file.h"
#include "bench/suite/compare_rule.h"

namespace pk::bench {

struct tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

/// The comparison of one leaf (a tensor or a plain value).
struct leaf_comparison {
  std::string path;        ///< e.g. "output", "output[1]", "output['loss']", "input[0][2]"
  bool ok = true;
  std::string message;     ///< why it failed, naming shapes/dtypes/values; empty when ok
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;   ///< elements outside the rule (non-finite ones included)
  std::uint64_t nonfinite = 0;    ///< NaN/Inf where the reference is finite
  double max_abs_error = 0;
  double max_rel_error = 0;       ///< per element; mode norm: ||got - want|| / ||want||
  std::int64_t max_ulp = 0;       ///< mode ulp: the largest distance in representable values
  std::string first_index;        ///< e.g. "[3, 17]" of the first mismatch
  std::string first_got, first_want;
};

struct comparison {
  bool ok = true;
  std::vector<leaf_comparison> leaves;
  /// The first failing leaf's message, prefixed with its path; empty when ok.
  std::string first_failure() const;
};

/// Compares the candidate's tree `got` (in file `gf`) with the reference's `want` (in `wf`), every
/// leaf with allclose at `tol`.
comparison compare_outputs(const nlohmann::json& got, const tensor_file& gf, const nlohmann::json& want,
                           const tensor_file& wf, tolerance tol);

/// As above with per-leaf rules. Rules of mode rank and index read their keys from the reference
/// file's "judge" tree (what the reference run recorded for them).
comparison compare_outputs(const nlohmann::json& got, const tensor_file& gf, const nlohmann::json& want,
                           const tensor_file& wf, const compare_spec& spec);

/// Checks the candidate's inputs after its call (`got`) against the reference's inputs before
/// the call (`want`): every tensor leaf the reference left unchanged (mutated[i] false, in
/// tensor_file order) must still be bitwise the same; leaves recorded as digests (large inputs)
/// must have the same digest.
comparison compare_unchanged_inputs(const nlohmann::json& got, const tensor_file& gf, const nlohmann::json& want,
                                    const tensor_file& wf, const std::vector<bool>& mutated);

/// In-place results: argument in_place[j] of the candidate's inputs after its call (`got_inputs`)
/// against the reference's value of it after its call (`want_in_place`, a tuple in the order of
/// in_place), by the rules of "input[i]" paths.
comparison compare_in_place(const nlohmann::json& got_inputs, const tensor_file& gf, const nlohmann::json& want_in_place,
                            const tensor_file& wf, const std::vector<int>& in_place, const compare_spec& spec);

/// What the judge applies to a problem's records: the per-leaf rules and the in-place positions.
struct judge_rules {
  compare_spec spec;
  std::vector<int> in_place;
};

/// The judge's whole check of one trial on one rank: the outputs, the in-place results, then every
/// input the reference leaves unchanged. `mutated` is the reference run's per-leaf record.
comparison judge_files(const tensor_file& got, const tensor_file& want, const compare_spec& spec,
                       const std::vector<int>& in_place, const std::vector<bool>& mutated);

}  // namespace pk::bench
