// The judge's reading of the two clocks: warm-up, hold, call counts, and the cross-checks that
// catch a candidate whose own clock lies or whose leftover work slows the reference.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "bench/eval/paired_stats.h"
#include "bench/eval/timing_plan.h"

namespace pk::bench {
namespace {

block_record blk(set_role who, double per_call, double wall, std::optional<set_role> after = std::nullopt,
                 bool null = false) {
  block_record b;
  b.who = who;
  b.null = null;
  b.ms.assign(5, per_call);
  b.wall_ms = wall;
  b.after = after;
  b.enqueue_ms = 0.4;
  return b;
}

// A trial of ABBA pairs: the reference's calls take ref_ms, the candidate's cand_ms (its clock
// reports cand_claim), each block's wall-clock is the null block's plus the calls' real time.
// spill_ms: what the candidate's leftover work adds to a reference call right after it; switch_ms:
// what a call of either set costs more right after the other set's block (cold caches).
std::vector<block_record> trial(double ref_ms, double cand_ms, double cand_claim, double null_wall = 1.0,
                                double spill_ms = 0, double switch_ms = 0) {
  std::vector<block_record> bs;
  bs.push_back(blk(set_role::reference, 0, null_wall, std::nullopt, true));
  std::optional<set_role> last;
  for (int p = 0; p < 40; ++p) {
    for (set_role who : p % 2 == 0 ? std::vector{set_role::reference, set_role::candidate}
                                   : std::vector{set_role::candidate, set_role::reference}) {
      const bool after_cand = last == set_role::candidate;
      const double cold = last && *last != who ? switch_ms : 0;
      const double real = who == set_role::reference ? ref_ms + (after_cand ? spill_ms : 0) + cold : cand_ms + cold;
      const double claim = who == set_role::reference ? real : cand_claim + cold;
      bs.push_back(blk(who, claim, null_wall + 5 * real, last));
      bs.back().pair = p;
      last = who;
    }
    if (p % 10 == 9) bs.push_back(blk(set_role::reference, 0, null_wall, std::nullopt, true));
  }
  return bs;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(timing_plan, honest_candidate_is_timed_by_its_own_clock) {
  const trial_timing t = judge_timing(trial(0.040, 0.020, 0.020));
  EXPECT_FALSE(t.wall_clock);
  EXPECT_TRUE(t.flags.empty());
  EXPECT_DOUBLE_EQ(median(t.reference_ms), 0.040);
  EXPECT_DOUBLE_EQ(median(t.candidate_ms), 0.020);
  EXPECT_EQ(t.reference_ms.size(), 200u);
}

TEST(timing_plan, a_clock_that_reports_nothing_is_replaced_by_the_wall_clock) {
  // A patched timer: the candidate does the reference's work but reports 0.1 us a call.
  const trial_timing t = judge_timing(trial(0.040, 0.040, 0.0001));
  EXPECT_TRUE(t.wall_clock);
  ASSERT_EQ(t.flags.size(), 1u);
  EXPECT_EQ(t.flags[0].id, "timing.own_clock");
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 1e-9);
}

TEST(timing_plan, work_left_on_another_stream_is_replaced_by_the_wall_clock) {
  // The events see a tenth of the work; the device-wide synchronisation before the answer sees it all.
  const trial_timing t = judge_timing(trial(0.200, 0.200, 0.020));
  EXPECT_TRUE(t.wall_clock);
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 1e-9);
}

TEST(timing_plan, leftover_work_that_slows_the_next_reference_block_is_discounted) {
  // The candidate returns early; its work runs on into the reference block that follows.
  const trial_timing t = judge_timing(trial(0.040, 0.010, 0.010, 1.0, 0.040));
  ASSERT_FALSE(t.flags.empty());
  EXPECT_EQ(t.flags.back().id, "timing.after_switch");
  EXPECT_DOUBLE_EQ(median(t.reference_ms), 0.040) << "only reference blocks after reference blocks count";
}

TEST(timing_plan, leftover_work_running_into_the_candidates_own_next_block_counts) {
  // As above, and the leftover also slows the candidate's block after its own: that block counts.
  std::vector<block_record> bs = trial(0.040, 0.010, 0.010, 1.0, 0.040);
  for (block_record& b : bs)
    if (b.who == set_role::candidate && b.after == set_role::candidate) b.ms.assign(5, 0.050);
  const trial_timing t = judge_timing(bs);
  EXPECT_NEAR(mean(t.candidate_ms), 0.050, 1e-12) << "only candidate blocks after candidate blocks count";
}

TEST(timing_plan, a_switch_that_slows_both_sets_is_no_speedup) {
  // A host-bound call runs 25% slower right after the other set's block, whichever set it is.
  const trial_timing t = judge_timing(trial(0.040, 0.040, 0.040, 1.0, 0, 0.010));
  ASSERT_FALSE(t.flags.empty());
  EXPECT_EQ(t.flags.back().id, "timing.after_switch");
  EXPECT_NEAR(mean(t.reference_ms), 0.040, 1e-12);
  EXPECT_NEAR(mean(t.candidate_ms), 0.040, 1e-12);
}

TEST(timing_plan, a_slightly_slow_clock_reading_is_not_flagged) {
  // 10% of jitter between the two clocks is within what the check allows.
  const trial_timing t = judge_timing(trial(0.040, 0.040, 0.036));
  EXPECT_FALSE(t.wall_clock);
}

TEST(timing_plan, wall_clock_readings_under_the_null_blocks_noise_are_no_speedup) {
  // Calls far shorter than a block's jitter: the reference's 20 us calls, a candidate whose clock
  // says nothing and whose 6 us calls run where it does not look (flagged: 30 us a block). Null
  // blocks that move by 0.1 ms say how far a reading moves without work; below that neither set
  // counts for less, so the ratio of two noises (3.3 here) is no speedup.
  auto bs = trial(0.020, 0.006, 0.0);
  int i = 0;
  for (auto& b : bs)
    if (b.null && i++ > 0) b.wall_ms += i % 2 ? 0.1 : -0.1;  // 1.0, 1.1, 0.9, 1.1, 0.9 ms
  const trial_timing t = judge_timing(bs);
  ASSERT_TRUE(t.wall_clock);
  ASSERT_FALSE(t.candidate_ms.empty());
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 0.01);

  // Calls well above the noise keep their wall-clock time.
  const trial_timing u = judge_timing(trial(0.200, 0.200, 0.0));
  ASSERT_TRUE(u.wall_clock);
  EXPECT_NEAR(median(u.candidate_ms), 0.200, 1e-9);
}

TEST(timing_plan, work_moved_into_one_call_of_a_block_counts_in_full) {
  // Batch-and-skip: the first call of each candidate block does all five calls' work.
  auto bs = trial(0.040, 0.040, 0.040);
  for (auto& b : bs)
    if (b.who == set_role::candidate && !b.null) b.ms = {0.200, 0.0001, 0.0001, 0.0001, 0.0001};
  const trial_timing t = judge_timing(bs);
  // No gain, and no batching credited either: each call counts as the block's longest.
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 0.2, 0.01);
}

// Commits after every timed block: digests of outputs of the same size cost both sets the same.
void with_commits(std::vector<block_record>& bs, double ref_commit, double cand_commit) {
  for (auto& b : bs)
    if (!b.null) b.commit_ms = b.who == set_role::reference ? ref_commit : cand_commit;
}

TEST(timing_plan, outputs_made_only_when_committed_to_count_in_the_block) {
  // A lazy block: no call runs, its (honest-looking) clock and wall-clock agree on 0.1 us a call;
  // the five calls' 0.2 ms of work happens when the judge asks for the commitments.
  auto bs = trial(0.040, 0.0001, 0.0001);
  with_commits(bs, 0.100, 0.100 + 5 * 0.040);
  const trial_timing t = judge_timing(bs);
  EXPECT_TRUE(t.wall_clock);
  ASSERT_FALSE(t.flags.empty());
  EXPECT_EQ(t.flags[0].id, "timing.late_commit") << t.flags[0].flag;
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 0.01);
}

TEST(timing_plan, commits_as_long_as_the_references_change_nothing) {
  auto bs = trial(0.040, 0.020, 0.020);
  with_commits(bs, 0.100, 0.110);
  const trial_timing t = judge_timing(bs);
  EXPECT_FALSE(t.wall_clock);
  EXPECT_TRUE(t.flags.empty());
  EXPECT_DOUBLE_EQ(median(t.candidate_ms), 0.020);
}

TEST(timing_plan, a_check_reads_its_thresholds_from_the_one_struct) {
  // Commits 10% longer pass the default thresholds; thresholds tightened to 5% and no floor charge them.
  auto bs = trial(0.040, 0.020, 0.020);
  with_commits(bs, 0.100, 0.110);
  timing_thresholds tight;
  tight.late_commit_ratio = 1.05;
  tight.late_commit_floor_ms = 0;
  const trial_timing t = judge_timing(bs, tight);
  EXPECT_TRUE(t.wall_clock);
  ASSERT_EQ(t.flags.size(), 1u);
  EXPECT_EQ(t.flags[0].id, "timing.late_commit") << t.flags[0].flag;
  EXPECT_EQ(t.flags[0].family, 7) << "lazy / subclass output, docs/integrity.md";
  EXPECT_TRUE(t.flags[0].charge.commit_allowance_ms.has_value());
}

// Each set's time to build a block's inputs, on the judge's clock: `base` ms with a spread of
// +-`noise` ms, plus `cand_extra` ms for the candidate; `load` ms more in every third pair, for
// both sets (a busy host).
void with_prepares(std::vector<block_record>& bs, double base, double noise, double cand_extra, double load = 0) {
  int i = 0;
  for (auto& b : bs)
    if (!b.null)
      b.prepare_ms = base + noise * std::sin(1.7 * ++i) + (b.pair % 3 == 0 ? load : 0.0) +
                     (b.who == set_role::candidate ? cand_extra : 0.0);
}

TEST(timing_plan, work_done_while_the_inputs_were_built_counts_in_the_block) {
  // The block's five 40 us calls answered from work done while their inputs were built: the block
  // itself takes nothing by either clock, the build 0.2 ms longer than the reference's.
  auto bs = trial(0.040, 0.0001, 0.0001);
  with_prepares(bs, 3.9, 0.05, 5 * 0.040);
  const trial_timing t = judge_timing(bs);
  ASSERT_EQ(t.flags.size(), 1u);
  EXPECT_EQ(t.flags[0].id, "timing.build") << t.flags[0].flag;
  // Recovered to within the builds' spread (their medians move by about 10 us here).
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 0.08);
}

TEST(timing_plan, builds_as_long_as_the_references_change_nothing) {
  auto bs = trial(0.040, 0.020, 0.020);
  with_prepares(bs, 3.9, 0.05, 0.003);  // a few microseconds apart: well within the readings' spread
  const trial_timing t = judge_timing(bs);
  EXPECT_TRUE(t.flags.empty()) << t.flags[0].flag;
  EXPECT_DOUBLE_EQ(median(t.candidate_ms), 0.020);
}

TEST(timing_plan, work_hidden_in_builds_is_found_under_a_load_that_slows_both_sets) {
  // Builds of 190 ms that a busy host lengthens by 60 ms in one pair of three: 30 ms of hidden work
  // is less than that, but each pair's two builds share the load.
  auto bs = trial(6.0, 0.01, 0.01);
  with_prepares(bs, 190, 2, 30, 60);
  const trial_timing t = judge_timing(bs);
  ASSERT_FALSE(t.flags.empty());
  EXPECT_EQ(t.flags.back().id, "timing.build") << t.flags.back().flag;
  EXPECT_GT(median(t.candidate_ms), 0.01 + 25.0 / 5);
}

TEST(timing_plan, a_steady_excess_in_building_counts_even_when_small) {
  // Readings that hardly spread: 30 us of work hidden in each build stands out, and counts.
  auto bs = trial(0.040, 0.034, 0.034);
  with_prepares(bs, 3.9, 0.001, 0.030);
  const trial_timing t = judge_timing(bs);
  ASSERT_EQ(t.flags.size(), 1u);
  EXPECT_EQ(t.flags[0].id, "timing.build") << t.flags[0].flag;
  EXPECT_NEAR(median(t.candidate_ms), 0.034 + 0.030 / 5, 1e-3);
}

TEST(timing_plan, half_a_small_calls_time_is_noticed) {
  // A clock that halves 40 us calls: small, but the judge's medians see it.
  EXPECT_TRUE(judge_timing(trial(0.040, 0.040, 0.020)).wall_clock);
}

TEST(timing_plan, warmup_needs_calls_time_and_settled_medians) {
  timing_options o;
  std::vector<block_record> w;
  for (int i = 0; i < 3; ++i) {
    w.push_back(blk(set_role::reference, 0.040, 1.2));
    w.push_back(blk(set_role::candidate, 0.040, 1.2));
  }
  EXPECT_FALSE(warmup_done(w, o, 50, false)) << "too little time";
  EXPECT_FALSE(warmup_done(w, o, 200, false)) << "15 calls each, 20 needed";
  w.push_back(blk(set_role::reference, 0.040, 1.2));
  w.push_back(blk(set_role::candidate, 0.040, 1.2));
  EXPECT_TRUE(warmup_done(w, o, 200, false));
  EXPECT_FALSE(warmup_done(w, o, 200, true)) << "the first timing of a run warms up for 300 ms";
  EXPECT_TRUE(warmup_done(w, o, 300, true));
  w.push_back(blk(set_role::candidate, 0.080, 1.2));
  EXPECT_FALSE(warmup_done(w, o, 200, false)) << "the candidate's median moved";
  EXPECT_TRUE(warmup_done(w, o, 3000, false)) << "the cap ends it";
}

TEST(timing_plan, hold_and_call_counts) {
  timing_options o;
  std::vector<block_record> w{blk(set_role::reference, 0.040, 1), blk(set_role::candidate, 0.020, 1)};
  EXPECT_DOUBLE_EQ(hold_ms(w), 0.5);                 // 1.25 x 0.4 ms
  EXPECT_EQ(timed_pairs(w, o), 80);                  // 30 ms / 0.04 ms = 750 calls, at most max_calls = 400
  o.max_calls = 1000;
  EXPECT_EQ(timed_pairs(w, o), 150);
  o.max_calls = 400;
  w = {blk(set_role::reference, 10, 1), blk(set_role::candidate, 10, 1)};
  EXPECT_EQ(timed_pairs(w, o), 20);                  // at least min_calls = 100
}

// Barriers and flushes between a block's calls: the same in both sets, read from each block's span
// on the set's own clock less its calls.
void with_gaps(std::vector<block_record>& bs, double ref_gap, double cand_gap, double wobble = 0) {
  int i = 0;
  for (auto& b : bs)
    if (!b.null) b.gap_ms = (b.who == set_role::reference ? ref_gap : cand_gap) + (i++ % 2 ? wobble : -wobble);
}

TEST(timing_plan, work_between_a_candidate_s_calls_counts_in_its_blocks) {
  // 10% of each call's work (40 us of 400) runs outside its events, beside the barriers: its own
  // clock claims 360 us, within the wall-clock's 20% margin, so only the spans show it.
  auto bs = trial(0.400, 0.400, 0.360);
  with_gaps(bs, 0.150, 0.350, 0.005);
  const trial_timing t = judge_timing(bs);
  EXPECT_FALSE(t.wall_clock);
  ASSERT_FALSE(t.flags.empty());
  EXPECT_EQ(t.flags.back().id, "timing.span") << t.flags.back().flag;
  EXPECT_NEAR(median(t.reference_ms) / median(t.candidate_ms), 1.0, 0.01);

  // Without the spans it would have read 1.11x; with equal spans (and their noise) nothing is flagged.
  auto honest = trial(0.400, 0.400, 0.400);
  with_gaps(honest, 0.150, 0.150, 0.02);
  const trial_timing h = judge_timing(honest);
  EXPECT_TRUE(h.flags.empty()) << h.flags.front().flag;
  EXPECT_NEAR(median(h.reference_ms) / median(h.candidate_ms), 1.0, 1e-9);
}

// A candidate that finds its block's other inputs and does all five calls' work in its first call,
// batched: the block's mean alone would credit the batching. The first call's share of the block
// gives it away, and each of its calls then counts as the longest.
TEST(timing_plan, work_of_a_block_done_in_one_call_counts_as_its_longest_call) {
  auto lump = [](std::vector<block_record> bs, double first, double rest) {
    for (auto& b : bs)
      if (b.who == set_role::candidate && !b.null) b.ms = {first, rest, rest, rest, rest};
    return bs;
  };
  // Five calls of 40 us batched into one of 120 us: a mean of 24.8 us per call.
  const auto batched = judge_timing(lump(trial(0.040, 0.0248, 0.0248), 0.120, 0.001));
  ASSERT_FALSE(batched.flags.empty());
  EXPECT_EQ(batched.flags.back().id, "timing.batching") << batched.flags.back().flag;
  EXPECT_NEAR(median(batched.candidate_ms), 0.120, 1e-9);
  EXPECT_LT(median(batched.reference_ms) / median(batched.candidate_ms), 1.0);

  // Calls that vary (one of five twice as long as the others) are no such thing.
  const auto uneven = judge_timing(lump(trial(0.040, 0.040, 0.040), 0.066, 0.0335));
  EXPECT_TRUE(uneven.flags.empty()) << uneven.flags.front().flag;
  EXPECT_NEAR(median(uneven.candidate_ms), 0.040, 1e-9);
}

// A trial as the GPU host times it, every reading spread by a factor e^N(0, noise): ABBA pairs of
// blocks of 5 calls, the reference's calls of call_ms, the candidate's of cand_call_ms (its clock
// says so too), with gap_ms of barrier and flush in each reference block (the candidate's:
// cand_gap_ratio times it, an offset that belongs to the pair of processes, plus hidden_ms of
// work run there, outside its events); commits and builds where their times are given.
struct measured_trial {
  double call_ms = 0.0053, cand_call_ms = 0.0053;  ///< problem 1 at W=1 on one H200
  double gap_ms = 0.035, cand_gap_ratio = 1, hidden_ms = 0;
  double noise = 0.005;
  double commit_ms = 0, prepare_ms = 0;
  double null_wall_ms = 0.5;
  unsigned seed = 1;
  int pairs = 80;
};

std::vector<block_record> measured(const measured_trial& m) {
  std::mt19937 gen(m.seed);
  std::normal_distribution<double> normal(0, 1);
  auto jitter = [&] { return std::exp(m.noise * normal(gen)); };
  auto null_block = [&] { return blk(set_role::reference, 0, m.null_wall_ms * jitter(), std::nullopt, true); };
  std::vector<block_record> bs{null_block()};
  std::optional<set_role> last;
  for (int p = 0; p < m.pairs; ++p) {
    for (set_role who : p % 2 == 0 ? std::vector{set_role::reference, set_role::candidate}
                                   : std::vector{set_role::candidate, set_role::reference}) {
      const bool ref = who == set_role::reference;
      block_record b = blk(who, 0, 0, last);
      b.pair = p;
      for (double& ms : b.ms) ms = (ref ? m.call_ms : m.cand_call_ms) * jitter();
      const double gap = (ref ? m.gap_ms : m.gap_ms * m.cand_gap_ratio + m.hidden_ms) * jitter();
      b.gap_ms = gap;
      double calls = 0;
      for (double ms : b.ms) calls += ms;
      b.wall_ms = (m.null_wall_ms + calls + gap - m.gap_ms) * jitter();
      if (m.commit_ms > 0) b.commit_ms = m.commit_ms * jitter();
      if (m.prepare_ms > 0) b.prepare_ms = m.prepare_ms * jitter();
      bs.push_back(b);
      last = who;
    }
    if (p % 10 == 9) bs.push_back(null_block());
  }
  return bs;
}

median_interval speedup_of(const trial_timing& t) {
  return median_ratio(t.log_ratios, timing_thresholds{}.confidence);
}

TEST(timing_plan, a_per_set_offset_in_the_mechanics_with_equal_calls_is_no_charge) {
  // Problem 1's reference against itself on one H200 with a flush and barrier per call: 172 us of
  // mechanics per block, 2% more in the candidate's process for the whole evaluation.
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto bs = measured({.gap_ms = 0.172, .cand_gap_ratio = 1.02, .seed = seed});
    const trial_timing t = judge_timing(bs);
    EXPECT_TRUE(t.flags.empty()) << "seed " << seed << ": " << t.flags.front().flag;
    const median_interval s = speedup_of(t);
    EXPECT_TRUE(s.holds(1.0)) << "seed " << seed << ": " << s.low << "-" << s.high;
    EXPECT_NEAR(s.median, 1.0, 0.02) << "seed " << seed;
  }
  // The band is what spares it: without one the offset is charged as hidden work.
  timing_thresholds no_band;
  no_band.span_band_ratio = 0;
  const trial_timing charged = judge_timing(measured({.gap_ms = 0.172, .cand_gap_ratio = 1.02}), no_band);
  ASSERT_FALSE(charged.flags.empty());
  EXPECT_EQ(charged.flags.back().id, "timing.span");
}

TEST(timing_plan, hidden_work_twice_the_band_is_charged_and_half_of_it_is_within_the_bound) {
  // One barrier and flush per block (35 us): the band is its floor, 2 us a block. A candidate
  // that moves work of its calls into the gap, outside its events.
  const timing_thresholds th;
  const double band = std::max(th.event_resolution_ms, th.span_band_ratio * 0.035);
  auto moved = [](double hidden) {
    return measured({.cand_call_ms = 0.0053 - hidden / 5, .hidden_ms = hidden});
  };
  const trial_timing twice = judge_timing(moved(2 * band));
  ASSERT_FALSE(twice.flags.empty());
  EXPECT_EQ(twice.flags.back().id, "timing.span") << twice.flags.back().flag;
  EXPECT_NEAR(speedup_of(twice).median, 1.0, 0.02) << "the charge takes back what was hidden";

  // Half the band goes uncharged: the gain stays within band / (a block's calls), the bound
  // docs/integrity.md states.
  const trial_timing half = judge_timing(moved(band / 2));
  EXPECT_TRUE(half.flags.empty()) << half.flags.front().flag;
  const double gain = speedup_of(half).median;
  EXPECT_GT(gain, 1.0);
  EXPECT_LT(gain, 1.0 + band / (5 * 0.0053));
}

TEST(timing_plan, five_percent_more_work_reads_slower_with_an_interval_below_one) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const trial_timing t = judge_timing(measured({.cand_call_ms = 1.05 * 0.0053, .noise = 0.01, .seed = seed}));
    EXPECT_TRUE(t.flags.empty()) << t.flags.front().flag;
    const median_interval s = speedup_of(t);
    EXPECT_NEAR(s.median, 1 / 1.05, 0.01) << "seed " << seed;
    EXPECT_LT(s.high, 1.0) << "seed " << seed;
  }
}

TEST(timing_plan, a_busy_hosts_spread_charges_an_honest_candidate_nothing) {
  // A loaded 2-core CPU host: every reading (calls, wall-clocks, commits, builds) spread by 35%.
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto bs = measured({.call_ms = 0.040, .cand_call_ms = 0.040, .gap_ms = 0.15, .noise = 0.35,
                              .commit_ms = 0.1, .prepare_ms = 3.9, .null_wall_ms = 1.0, .seed = seed});
    const trial_timing t = judge_timing(bs);
    EXPECT_TRUE(t.flags.empty()) << "seed " << seed << ": " << t.flags.front().flag;
    EXPECT_FALSE(t.wall_clock);
    EXPECT_TRUE(speedup_of(t).holds(1.0)) << "seed " << seed;
  }
}

TEST(timing_plan, one_slow_reference_commit_in_a_short_trial_hides_no_lazy_output) {
  // The CPU red-team set's trials: 8 pairs on a loaded 2-core host. A lazy candidate's commits do
  // its five calls' work (ten times the reference's commits); one reference commit as slow as
  // theirs puts the top of the reference's 99.9% interval (its whole range at 8 blocks) above them.
  for (unsigned seed = 1; seed <= 10; ++seed) {
    auto bs = measured({.call_ms = 0.0001, .cand_call_ms = 0.0001, .gap_ms = 0.15, .noise = 0.35,
                        .commit_ms = 20, .null_wall_ms = 1.0, .seed = seed, .pairs = 8});
    bool slowed = false;
    for (auto& b : bs) {
      if (b.null) continue;
      if (b.who == set_role::candidate) b.commit_ms *= 10;
      else if (!slowed) slowed = true, b.commit_ms *= 12;
    }
    const trial_timing t = judge_timing(bs);
    ASSERT_FALSE(t.flags.empty()) << "seed " << seed;
    EXPECT_EQ(t.flags.front().id, "timing.late_commit") << t.flags.front().flag;
    EXPECT_TRUE(t.wall_clock);
  }
}

TEST(timing_plan, a_short_busy_trial_charges_an_honest_candidate_nothing) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const auto bs = measured({.call_ms = 0.040, .cand_call_ms = 0.040, .gap_ms = 0.15, .noise = 0.35,
                              .commit_ms = 0.1, .prepare_ms = 3.9, .null_wall_ms = 1.0, .seed = seed, .pairs = 8});
    const trial_timing t = judge_timing(bs);
    EXPECT_TRUE(t.flags.empty()) << "seed " << seed << ": " << t.flags.front().flag;
    EXPECT_FALSE(t.wall_clock) << "seed " << seed;
  }
}

}  // namespace
}  // namespace pk::bench
