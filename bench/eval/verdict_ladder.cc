#include "bench/eval/verdict_ladder.h"

#include <array>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "bench/eval/evaluate.h"
#include "config/enum_names.h"

namespace pk::bench {

namespace {

constexpr std::array<config::enum_name<verdict_rung>, 8> rung_names = {{
    {verdict_rung::source_scan, "source scan"},
    {verdict_rung::guard_refusal, "guard refusal"},
    {verdict_rung::post_run_scan, "post-run scan"},
    {verdict_rung::background, "background"},
    {verdict_rung::set_failure, "set failure"},
    {verdict_rung::forged_record, "forged record"},
    {verdict_rung::mismatch, "mismatch"},
    {verdict_rung::correct, "correct"},
}};

ladder_verdict forbidden(verdict_rung rung, forbidden_reason reason, std::string message) {
  return {rung, {verdict::forbidden, reason, std::move(message), ""}};
}

// The first failing rank of the judged trials, by `failed` (forged, or not ok).
template <class Failed>
std::optional<std::string> first_failure(const eval_report& rep, Failed failed) {
  for (const auto& t : rep.trials)
    for (const auto& c : t.ranks)
      if (failed(c)) return fmt::format("trial {}, rank {}: {}", t.trial, c.rank, c.message);
  return std::nullopt;
}

// What CUDA, torch and NCCL say when an allocation on the GPU fails.
bool out_of_gpu_memory(std::string_view text) {
  for (std::string_view sign : {"out of memory", "OutOfMemoryError", "cudaErrorMemoryAllocation",
                                "CUDA_ERROR_OUT_OF_MEMORY", "Failed to CUDA calloc", "Failed to CUDA malloc"})
    if (text.find(sign) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::string to_string(verdict_rung r) {
  const std::string_view name = config::enum_to_string(rung_names, r, {});
  if (name.empty()) throw std::logic_error("verdict_rung out of range");
  return std::string(name);
}

ladder_verdict decide_verdict(const verdict_evidence& e) {
  if (!e.source_multicast.empty())
    return forbidden(verdict_rung::source_scan, forbidden_reason::multicast,
                     "refused before running. " + e.source_multicast);
  if (!e.post_run_multicast || !e.judge_records)
    throw std::logic_error("decide_verdict: the source scan found nothing, but there is no run to judge");
  if (!e.guard_refusals.empty())
    return forbidden(verdict_rung::guard_refusal, forbidden_reason::multicast,
                     "the run-time guard refused NVLink multicast in the candidate's processes (nothing reached "
                     "the GPU): " + e.guard_refusals);
  if (const std::string found = e.post_run_multicast(); !found.empty())
    return forbidden(verdict_rung::post_run_scan, forbidden_reason::multicast,
                     "found in what the candidate's run produced. " + found);
  if (!e.background.empty()) {
    std::string what;
    for (const auto& b : e.background) what += (what.empty() ? "" : "; ") + b;
    return forbidden(verdict_rung::background, forbidden_reason::background,
                     "the candidate left work running after its calls (a solution must finish its work before it "
                     "returns, and start no process or thread that outlives the call): " + what);
  }
  if (e.failure) {
    const rank_set_ending none;
    const rank_set_ending& ending = e.failure->ending ? *e.failure->ending : none;
    // The input generator failed before any candidate code ran: the problem is broken, not the
    // candidate.
    const bool generator = e.failure->failure.what == rank_failure::kind::reported &&
                           e.failure->failure.worker_kind == "generator_error";
    if (e.failure->set == set_role::reference || generator) {
      const std::string described = describe(e.failure->failure, ending);
      // The reference's need of GPU memory is fixed and fits its GPUs; beside a candidate it gets
      // what the candidate left. Running it short is the candidate's failure, never the judge's
      // (which would hide the candidate's verdict behind an evaluator error).
      if (!generator && e.shared_gpus && out_of_gpu_memory(described))
        return {verdict_rung::set_failure,
                {verdict::runtime_error, forbidden_reason::none,
                 "the reference ran out of GPU memory beside the candidate, whose ranks share its GPUs: a "
                 "solution must leave the GPU memory it does not use to the reference. The reference's failure: " +
                     described,
                 ""}};
      throw evaluation_error(fmt::format("the reference of problem {} failed: {}", e.problem, described));
    }
    return {verdict_rung::set_failure, verdict_for(e.failure->failure, ending)};
  }
  const eval_report& rep = e.judge_records();
  if (auto forged = first_failure(rep, [](const rank_check& c) { return c.forged; }))
    return forbidden(verdict_rung::forged_record, forbidden_reason::tampering, *forged);
  if (auto wrong = first_failure(rep, [](const rank_check& c) { return !c.ok; }))
    return {verdict_rung::mismatch, {verdict::mismatch, forbidden_reason::none, *wrong, ""}};
  return {verdict_rung::correct,
          {verdict::correct, forbidden_reason::none, e.perf && !rep.speedup ? "timings missing from the run" : "",
           ""}};
}

}  // namespace pk::bench
