// The verdict ladder: each rung beats every rung below it, the costly rungs are read only when
// reached, and a failure of the reference's set (or of the input generator) is the judge's error.
#include <gtest/gtest.h>

#include "bench/eval/evaluate.h"
#include "bench/eval/verdict_ladder.h"

namespace pk::bench {
namespace {

// Evidence on which every rung holds, counting the calls of its costly rungs.
struct every_rung {
  eval_report rep;
  rank_set_ending ending;
  std::string post_run = "libnccl_nvls.so: cuMulticastCreate";
  int scans = 0, judged = 0;
  verdict_evidence e;

  every_rung() {
    trial_report t;
    t.trial = 1;
    t.ranks = {{0, false, "record not what was committed", 0, 0, 0, true},
               {1, false, "output[0]: off by 2", 0, 0, 1, false}};
    rep.trials.push_back(t);
    e.problem = "1_all_reduce";
    e.source_multicast = "cuMulticastCreate at byte 12";
    e.guard_refusals = "rank 0: cuMulticastCreate";
    e.post_run_multicast = [this] {
      ++scans;
      return post_run;
    };
    e.background = {"pid 7 (python)", "thread spin"};
    rank_failure f;
    f.what = rank_failure::kind::timeout;
    f.rank = 1;
    f.phase = "trial 0";
    f.limit_s = 5;
    e.failure = failed_set{f, set_role::candidate, &ending};
    e.judge_records = [this]() -> const eval_report& {
      ++judged;
      return rep;
    };
  }

  // Takes away the evidence of `r`, so the rung below it can decide.
  void clear(verdict_rung r) {
    switch (r) {
      case verdict_rung::source_scan: e.source_multicast.clear(); break;
      case verdict_rung::guard_refusal: e.guard_refusals.clear(); break;
      case verdict_rung::post_run_scan: post_run.clear(); break;
      case verdict_rung::background: e.background.clear(); break;
      case verdict_rung::set_failure: e.failure.reset(); break;
      case verdict_rung::forged_record: rep.trials[0].ranks[0] = {0, true, "", 0, 0, 0, false}; break;
      case verdict_rung::mismatch: rep.trials[0].ranks[1] = {1, true, "", 0, 0, 0, false}; break;
      case verdict_rung::correct: break;
    }
  }
};

TEST(verdict_ladder, each_rung_beats_every_rung_below_it) {
  struct step {
    verdict_rung rung;
    verdict v;
    forbidden_reason reason;
    const char* in_message;
  };
  const std::vector<step> ladder{
      {verdict_rung::source_scan, verdict::forbidden, forbidden_reason::multicast, "refused before running"},
      {verdict_rung::guard_refusal, verdict::forbidden, forbidden_reason::multicast, "run-time guard"},
      {verdict_rung::post_run_scan, verdict::forbidden, forbidden_reason::multicast, "libnccl_nvls.so"},
      {verdict_rung::background, verdict::forbidden, forbidden_reason::background, "pid 7 (python); thread spin"},
      {verdict_rung::set_failure, verdict::timeout, forbidden_reason::none, "rank 1 spent more than 5 s"},
      {verdict_rung::forged_record, verdict::forbidden, forbidden_reason::tampering, "trial 1, rank 0: record"},
      {verdict_rung::mismatch, verdict::mismatch, forbidden_reason::none, "trial 1, rank 1: output[0]"},
      {verdict_rung::correct, verdict::correct, forbidden_reason::none, ""},
  };
  every_rung ev;
  for (const step& s : ladder) {
    const ladder_verdict d = decide_verdict(ev.e);
    EXPECT_EQ(to_string(d.rung), to_string(s.rung));
    EXPECT_EQ(d.verdict.v, s.v) << to_string(s.rung);
    EXPECT_EQ(d.verdict.reason, s.reason) << to_string(s.rung);
    EXPECT_NE(d.verdict.message.find(s.in_message), std::string::npos)
        << to_string(s.rung) << ": " << d.verdict.message;
    ev.clear(s.rung);
  }
}

TEST(verdict_ladder, costly_rungs_are_read_only_when_reached) {
  // After each rung is cleared (from the top), how often the post-run scan and the judging of the
  // records have run: never before they are reached, never again once a rung above them decides.
  struct step {
    verdict_rung cleared;
    int scans, judged;
  };
  const std::vector<step> steps{{verdict_rung::source_scan, 0, 0},   {verdict_rung::guard_refusal, 1, 0},
                                {verdict_rung::post_run_scan, 2, 0}, {verdict_rung::background, 3, 0},
                                {verdict_rung::set_failure, 4, 1},   {verdict_rung::forged_record, 5, 2}};
  every_rung ev;
  decide_verdict(ev.e);
  EXPECT_EQ(ev.scans + ev.judged, 0) << "the source scan decides alone";
  for (const step& s : steps) {
    ev.clear(s.cleared);
    decide_verdict(ev.e);
    EXPECT_EQ(ev.scans, s.scans) << "after clearing " << to_string(s.cleared);
    EXPECT_EQ(ev.judged, s.judged) << "after clearing " << to_string(s.cleared);
  }
}

TEST(verdict_ladder, the_reference_or_the_generator_failing_is_the_judges_error_below_background) {
  every_rung ev;
  for (verdict_rung r : {verdict_rung::source_scan, verdict_rung::guard_refusal, verdict_rung::post_run_scan})
    ev.clear(r);
  ev.e.failure->set = set_role::reference;
  EXPECT_EQ(decide_verdict(ev.e).rung, verdict_rung::background) << "work left running beats the reference's failure";
  ev.clear(verdict_rung::background);
  EXPECT_THROW(decide_verdict(ev.e), evaluation_error);
  ev.e.failure->set = set_role::candidate;
  ev.e.failure->failure.what = rank_failure::kind::reported;
  ev.e.failure->failure.worker_kind = "generator_error";
  EXPECT_THROW(decide_verdict(ev.e), evaluation_error) << "the input generator ran before any candidate code";
  ev.e.failure->failure.worker_kind = "call_error";
  EXPECT_EQ(decide_verdict(ev.e).verdict.v, verdict::runtime_error);
}

TEST(verdict_ladder, a_reference_out_of_gpu_memory_beside_the_candidate_is_the_candidates_failure) {
  every_rung ev;
  for (verdict_rung r : {verdict_rung::source_scan, verdict_rung::guard_refusal, verdict_rung::post_run_scan,
                         verdict_rung::background})
    ev.clear(r);
  rank_failure& f = ev.e.failure->failure;
  ev.e.failure->set = set_role::reference;
  f.what = rank_failure::kind::reported;
  f.worker_kind = "harness_error";
  f.phase = "init";
  f.message = "DistBackendError: NCCL error: unhandled cuda error\nLast error:\nFailed to CUDA calloc async 4 bytes";
  ev.e.shared_gpus = true;
  const auto v = decide_verdict(ev.e);
  EXPECT_EQ(v.rung, verdict_rung::set_failure);
  EXPECT_EQ(v.verdict.v, verdict::runtime_error);
  EXPECT_NE(v.verdict.message.find("ran out of GPU memory beside the candidate"), std::string::npos) << v.verdict.message;
  EXPECT_NE(v.verdict.message.find("Failed to CUDA calloc"), std::string::npos) << "the reference's own words";
  f.message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
  EXPECT_EQ(decide_verdict(ev.e).verdict.v, verdict::runtime_error);
  // Any other failure of the reference is still the judge's; so is running short without shared GPUs.
  f.message = "ValueError: the reference's own bug";
  EXPECT_THROW(decide_verdict(ev.e), evaluation_error);
  f.message = "RuntimeError: CUDA out of memory";
  ev.e.shared_gpus = false;
  EXPECT_THROW(decide_verdict(ev.e), evaluation_error);
}

TEST(verdict_ladder, a_correct_run_without_timings_says_so) {
  every_rung ev;
  for (verdict_rung r : {verdict_rung::source_scan, verdict_rung::guard_refusal, verdict_rung::post_run_scan,
                         verdict_rung::background, verdict_rung::set_failure, verdict_rung::forged_record,
                         verdict_rung::mismatch})
    ev.clear(r);
  ev.e.perf = true;
  EXPECT_EQ(decide_verdict(ev.e).verdict.message, "timings missing from the run");
  ev.rep.speedup = 1.5;
  EXPECT_EQ(decide_verdict(ev.e).verdict.message, "");
  ev.rep.speedup.reset();
  ev.e.perf = false;
  EXPECT_EQ(decide_verdict(ev.e).verdict.message, "");
}

TEST(verdict_ladder, a_run_missing_its_evidence_is_a_programming_error) {
  verdict_evidence e;
  EXPECT_THROW(decide_verdict(e), std::logic_error);
  e.source_multicast = "found";
  EXPECT_EQ(decide_verdict(e).rung, verdict_rung::source_scan) << "nothing runs after the source scan";
}

}  // namespace
}  // namespace pk::bench
