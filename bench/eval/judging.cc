#include "bench/eval/judging.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/eval/untrusted_file.h"

namespace pk::bench {

namespace fs = std::filesystem;

rank_check judge_call(const recorded_call& call, tolerance tol) {
  rank_check rc;
  rc.rank = call.rank;
  try {
    const tensor_file want = tensor_file::read(call.reference_file);
    // The candidate records the same trees as the reference: far larger is no honest record.
    const std::uint64_t cap = 4 * fs::file_size(call.reference_file) + (1 << 20);
    const tensor_file got = tensor_file::parse(read_untrusted(call.candidate_root, call.candidate_file, cap),
                                               call.candidate_root / call.candidate_file);
    comparison c = compare_outputs(got.tree("output"), got, want.tree("output"), want, tol);
    if (c.ok) c = compare_unchanged_inputs(got.tree("inputs"), got, want.tree("inputs"), want, call.mutated);
    rc.ok = c.ok;
    rc.message = c.first_failure();
    for (const auto& leaf : c.leaves) {
      rc.max_abs_error = std::max(rc.max_abs_error, leaf.max_abs_error);
      rc.max_rel_error = std::max(rc.max_rel_error, leaf.max_rel_error);
      rc.mismatches += leaf.mismatches;
    }
  } catch (const std::exception& e) {
    // A missing, refused or malformed result is the candidate's process's doing.
    rc.ok = false;
    rc.message = fmt::format("its recorded result cannot be read: {}", e.what());
  }
  return rc;
}

void add_errors(eval_report& r, const rank_check& c) {
  r.max_abs_error = std::max(r.max_abs_error, c.max_abs_error);
  r.max_rel_error = std::max(r.max_rel_error, c.max_rel_error);
}

void summarize_timing(eval_report& r, trial_report& t, const std::vector<double>& reference_ms,
                      const std::vector<double>& candidate_ms, const std::vector<std::string>& flags, bool wall_clock) {
  t.timing_flags = flags;
  t.wall_clock = wall_clock;
  for (const auto& f : flags) r.timing_flags.push_back(fmt::format("trial {}: {}", t.trial, f));
  if (reference_ms.empty() || candidate_ms.empty()) return;
  t.reference = stats_of(reference_ms);
  t.candidate = stats_of(candidate_ms);
  if (t.candidate->median_ms > 0) t.speedup = t.reference->median_ms / t.candidate->median_ms;
}

void summarize_pooled_timing(eval_report& r, const std::vector<double>& reference_ms,
                             const std::vector<double>& candidate_ms) {
  if (reference_ms.empty() || candidate_ms.empty()) return;
  r.reference = stats_of(reference_ms);
  r.candidate = stats_of(candidate_ms);
  if (r.candidate->median_ms > 0) r.speedup = r.reference->median_ms / r.candidate->median_ms;
}

}  // namespace pk::bench
