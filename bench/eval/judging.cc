#include "bench/eval/judging.h"

#include <algorithm>

#include <fmt/format.h>


#include "bench/eval/paired_stats.h"
#include "bench/eval/untrusted_file.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

// The speedup and its interval share the cross-checks' confidence.
constexpr double speedup_confidence = timing_thresholds{}.confidence;

// The speedup from the pairs' log ratios: their median's exp, with its interval.
void read_speedup(const std::vector<double>& log_ratios, std::optional<double>& speedup,
                  std::optional<speedup_interval>& interval) {
  if (log_ratios.empty()) return;
  const median_interval m = median_ratio(log_ratios, speedup_confidence);
  speedup = m.median;
  interval = speedup_interval{m.low, m.high, speedup_confidence, static_cast<int>(m.n)};
}

void summarize_timing(eval_report& r, trial_report& t, const trial_timing& timing) {
  t.wall_clock = timing.wall_clock;
  for (const auto& f : timing.flags) {
    t.timing_flags.push_back(f.flag);
    r.timing_flags.push_back(fmt::format("trial {}: {}", t.trial, f.flag));
  }
  if (timing.reference_ms.empty() || timing.candidate_ms.empty()) return;
  t.reference = stats_of(timing.reference_ms);
  t.candidate = stats_of(timing.candidate_ms);
  read_speedup(timing.log_ratios, t.speedup, t.interval);
}

void summarize_pooled_timing(eval_report& r, const std::vector<double>& reference_ms,
                             const std::vector<double>& candidate_ms, const std::vector<double>& log_ratios) {
  if (reference_ms.empty() || candidate_ms.empty()) return;
  r.reference = stats_of(reference_ms);
  r.candidate = stats_of(candidate_ms);
  read_speedup(log_ratios, r.speedup, r.interval);
}

}  // namespace

rank_check judge_call(const recorded_call& call, const judge_rules& rules) {
  rank_check rc;
  rc.rank = call.rank;
  try {
    const tensor_file want = tensor_file::read(call.reference_file);
    // The candidate records the same trees as the reference: far larger is no honest record.
    const std::uint64_t cap = 4 * fs::file_size(call.reference_file) + (1 << 20);
    const tensor_file got = tensor_file::parse(read_untrusted(call.candidate_root, call.candidate_file, cap),
                                               call.candidate_root / call.candidate_file);
    if (call.committed)
      if (auto why = commit_mismatch(got, *call.committed)) {
        rc.ok = false;
        rc.forged = true;
        rc.message = *why;
        return rc;
      }
    const comparison c = judge_files(got, want, rules.spec, rules.in_place, call.mutated);
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

void judge_run(eval_report& rep, const conduct_outcome& run, const reference_outputs& refs,
               const fs::path& candidate_out, int world, const judge_rules& rules, bool perf) {
  auto rank_dir = [](int r) { return fs::path(fmt::format("rank{}", r)); };
  bool all_ok = true;
  std::vector<double> ref_all, cand_all, log_ratios_all;
  for (const trial_record& t : run.trials) {
    trial_report tr;
    tr.trial = t.trial;
    const auto& mutated = refs.mutated.at(t.trial);
    for (int r = 0; r < world; ++r) {
      const rank_check c = judge_call(
          {r, candidate_out, rank_dir(r) / t.file, refs.file(t.trial, r), mutated.at(static_cast<std::size_t>(r))}, rules);
      add_errors(rep, c);
      tr.correct = tr.correct && c.ok;
      tr.ranks.push_back(c);
    }
    for (const check_record& chk : run.checks) {
      if (chk.trial != t.trial) continue;
      ++tr.checked_calls;
      for (int r = 0; r < world; ++r) {
        rank_check c = judge_call({r, candidate_out, rank_dir(r) / chk.file, refs.live_out / rank_dir(r) / chk.file,
                                   chk.mutated.at(static_cast<std::size_t>(r)), &chk.committed.at(static_cast<std::size_t>(r))},
                                  rules);
        add_errors(rep, c);
        if (!c.ok && (tr.ranks.at(static_cast<std::size_t>(r)).ok || c.forged)) {
          c.message = "a timed call (checked in secret): " + c.message;
          tr.correct = false;
          tr.ranks.at(static_cast<std::size_t>(r)) = c;
        }
      }
    }
    if (tr.correct && t.timing) {
      summarize_timing(rep, tr, *t.timing);
      ref_all.insert(ref_all.end(), t.timing->reference_ms.begin(), t.timing->reference_ms.end());
      cand_all.insert(cand_all.end(), t.timing->candidate_ms.begin(), t.timing->candidate_ms.end());
      log_ratios_all.insert(log_ratios_all.end(), t.timing->log_ratios.begin(), t.timing->log_ratios.end());
    }
    all_ok = all_ok && tr.correct;
    rep.trials.push_back(std::move(tr));
  }
  // The pooled timing is of a run whose every trial was correct; the verdict is the ladder's
  // (verdict_ladder.h).
  if (all_ok && perf) summarize_pooled_timing(rep, ref_all, cand_all, log_ratios_all);
}

}  // namespace pk::bench
