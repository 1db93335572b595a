#include "bench/eval/timing_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bench/eval/paired_stats.h"

namespace pk::bench {

namespace {

double longest(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

std::vector<const block_record*> blocks_of(const std::vector<block_record>& blocks, set_role who) {
  std::vector<const block_record*> out;
  for (const auto& b : blocks)
    if (b.who == who && !b.null) out.push_back(&b);
  return out;
}

// Wall-clock of a timed block beyond the null blocks' (the calls' share of it), per block.
double implied_ms(const block_record& b, double null_wall) { return std::max(0.0, b.wall_ms - null_wall); }

// Twice the median absolute deviation: a spread that one stray reading does not move.
double spread(const std::vector<double>& v) {
  const double m = median_of(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::abs(x - m));
  return 2 * median_of(dev);
}

// The median over timed pairs of the candidate's figure less the reference's, where the low end of
// its interval passes the honest band: floor_ms (the clock's resolution) and band_ratio of the
// reference's median (an offset two honest sets keep for a whole evaluation). Then the whole
// median counts; an excess of 0 otherwise. Both figures of a pair come from the same seeds and
// mechanics, so what loads both sets alike drops out.
struct paired {
  double excess = 0, cand = 0, ref = 0;  ///< the excess; the candidate's and the reference's medians
};

template <class Field>
paired paired_excess(const std::vector<block_record>& blocks, const timing_thresholds& th, double floor_ms,
                     double band_ratio, Field field) {
  std::map<int, std::pair<std::optional<double>, std::optional<double>>> by_pair;  // (reference, candidate)
  for (const auto& b : blocks)
    if (!b.null && b.pair >= 0)
      (b.who == set_role::reference ? by_pair[b.pair].first : by_pair[b.pair].second) = field(b);
  std::vector<double> diffs, r, c;
  for (const auto& [pair, v] : by_pair)
    if (v.first && v.second) {
      diffs.push_back(*v.second - *v.first);
      r.push_back(*v.first);
      c.push_back(*v.second);
    }
  paired p;
  if (diffs.size() < th.min_samples) return p;
  p.cand = median_of(c);
  p.ref = median_of(r);
  const median_interval excess = median_with_interval(diffs, th.confidence);
  if (excess.low > std::max(floor_ms, band_ratio * p.ref)) p.excess = excess.median;
  return p;
}

}  // namespace

bool warmup_done(const std::vector<block_record>& warmup, const timing_options& o, double spent_ms, bool first) {
  if (spent_ms >= o.warmup_max_ms) return true;
  const double min_ms = first ? std::max(o.warmup_min_ms, o.first_warmup_min_ms) : o.warmup_min_ms;
  if (spent_ms < min_ms) return false;
  for (set_role who : {set_role::reference, set_role::candidate}) {
    const auto mine = blocks_of(warmup, who);
    std::size_t calls = 0;
    for (const auto* b : mine) calls += b->ms.size();
    if (calls < static_cast<std::size_t>(o.warmup_min_calls) || mine.size() < 2) return false;
    const double last = median_of(mine.back()->ms), before = median_of(mine[mine.size() - 2]->ms);
    if (std::abs(last - before) > 0.05 * std::max(before, 1e-9)) return false;
  }
  return true;
}

double hold_ms(const std::vector<block_record>& warmup) {
  std::vector<double> enqueue;
  for (const auto& b : warmup)
    if (!b.null) enqueue.push_back(b.enqueue_ms);
  if (enqueue.empty()) return 0.5;
  std::sort(enqueue.begin(), enqueue.end());
  const double typical = enqueue[(3 * enqueue.size()) / 4];
  return std::clamp(1.25 * typical, 0.1, 2.0);
}

int timed_pairs(const std::vector<block_record>& warmup, const timing_options& o) {
  double per_call = 0;
  for (set_role who : {set_role::reference, set_role::candidate}) {
    const auto mine = blocks_of(warmup, who);
    if (!mine.empty()) per_call = std::max(per_call, median_of(mine.back()->ms));
  }
  int want = o.min_calls;
  if (per_call > 0) want = std::max(want, static_cast<int>(std::ceil(o.min_ms / per_call)));
  want = std::min(want, o.max_calls);
  const int block = std::max(1, o.block_calls);
  return std::max(1, (want + block - 1) / block);
}


void timing_charge::add(const timing_charge& other) {
  wall_clock = wall_clock || other.wall_clock;
  if (other.commit_allowance_ms) commit_allowance_ms = other.commit_allowance_ms;
  block_ms += other.block_ms;
  own_clock_ms += other.own_clock_ms;
  reference_after_own_only = reference_after_own_only || other.reference_after_own_only;
  candidate_after_own_only = candidate_after_own_only || other.candidate_after_own_only;
  longest_call = longest_call || other.longest_call;
}

namespace {

// One trial's blocks as the cross-checks read them.
struct trial_blocks {
  const std::vector<block_record>& all;
  std::vector<const block_record*> ref, cand;
  std::vector<double> null_walls;
  double null_wall = 0;  ///< the null blocks' median wall-clock: the mechanics without a call
  double noise_ms = 0;   ///< how far a block's wall-clock moves with no call in it
};

// A block's wall-clock beyond the null blocks', with what `c` charges a late commit.
double implied(const trial_blocks& tb, const block_record& b, const timing_charge& c) {
  const double late = c.commit_allowance_ms && b.who == set_role::candidate
                          ? std::max(0.0, b.commit_ms - *c.commit_allowance_ms)
                          : 0.0;
  return implied_ms(b, tb.null_wall) + late;
}

// Timed by the wall-clock, no block counts for less than the noise: below it a reading is noise,
// and the ratio of two noises (or a reading of zero) is no speedup.
double wall_clock_ms(const trial_blocks& tb, const block_record& b, const timing_charge& c) {
  return std::max(implied(tb, b, c), tb.noise_ms);
}

// A paired excess (see paired_excess) as a finding, its flag given the candidate's median, the
// reference's and the excess; nothing when there is no excess.
std::optional<timing_finding> excess_finding(const paired& p, const char* id, int family,
                                             fmt::format_string<double, double, double> why) {
  if (p.excess <= 0) return std::nullopt;
  return timing_finding{id, family, fmt::vformat(why, fmt::make_format_args(p.cand, p.ref, p.excess)), {}};
}

// Whether `cand` stands beyond ratio x `ref` + floor: wholly, by their intervals, or grossly, by
// their medians alone (for the checks that only choose the clock; see gross_ratio).
bool beyond(const median_interval& cand, const median_interval& ref, double ratio, double floor,
            const timing_thresholds& th) {
  return cand.low > ratio * ref.high + floor || cand.median > th.gross_ratio * (ratio * ref.median + floor);
}

// Commits: the same digests of outputs of the same size in both sets. A candidate whose commits
// take much longer made its outputs when asked for them, not in its block (family 7, lazy output):
// both sets are timed by the wall-clock, and its commits' excess counts in its blocks.
std::optional<timing_finding> late_commit(const trial_blocks& tb, const timing_thresholds& th) {
  auto commits = [](const std::vector<const block_record*>& bs) {
    std::vector<double> out;
    for (const auto* b : bs)
      if (b->commit_ms > 0) out.push_back(b->commit_ms);
    return out;
  };
  const std::vector<double> ref_commits = commits(tb.ref), cand_commits = commits(tb.cand);
  if (ref_commits.empty() || cand_commits.empty()) return std::nullopt;
  const median_interval ref = median_with_interval(ref_commits, th.confidence),
                        cand = median_with_interval(cand_commits, th.confidence);
  if (!beyond(cand, ref, th.late_commit_ratio, th.late_commit_floor_ms, th)) return std::nullopt;
  const double ref_commit = ref.median, cand_commit = cand.median;
  timing_finding f{"timing.late_commit", 7,
                   fmt::format("the candidate's commits to its outputs took {:.3f} ms per block where the "
                               "reference's took {:.3f} ms: its outputs were made after its blocks answered, and "
                               "that time counts in its blocks (both are timed by the wall-clock)",
                               cand_commit, ref_commit),
                   {}};
  f.charge.wall_clock = true;
  f.charge.commit_allowance_ms = ref_commit;
  return f;
}

// The candidate's own clock against the judge's: the ratio of wall-clock (less the null block's)
// to the sets' own sums, for each set. An honest candidate's ratio is the reference's; one far
// above it patched its timer or left work outside its events (family 8, timer patching): both sets
// are timed by the wall-clock. Nothing to add where `so_far` already times them so.
std::optional<timing_finding> own_clock(const trial_blocks& tb, const timing_thresholds& th,
                                        const timing_charge& so_far) {
  if (tb.null_walls.empty() || so_far.wall_clock) return std::nullopt;
  auto ratio_parts = [&](const std::vector<const block_record*>& bs) {
    std::vector<double> walls, own;
    for (const auto* b : bs) {
      walls.push_back(implied(tb, *b, so_far));
      own.push_back(sum(b->ms));
    }
    return std::pair{median_with_interval(walls, th.confidence), median_with_interval(own, th.confidence)};
  };
  const auto [ref_walls, ref_owns] = ratio_parts(tb.ref);
  const auto [cand_walls, cand_owns] = ratio_parts(tb.cand);
  // The reference's ratio at its most generous to the candidate: a busy host spreads both clocks.
  const double ref_ratio = ref_owns.low > 0 ? ref_walls.high / ref_owns.low : 1.0;
  // Medians over a trial's blocks, so the judge's clock of one block jitters within block_jitter_ms.
  // Intervals only: the wall-clock here is less the null blocks', whose own noise (one null block
  // in a short trial) moves the medians apart where the commits' and switches' readings do not.
  if (!(cand_walls.low > th.own_clock_ratio * std::max(ref_ratio, 1.0) * cand_owns.high + th.block_jitter_ms))
    return std::nullopt;
  const double ref_implied = ref_walls.median, ref_own = ref_owns.median;
  const double cand_implied = cand_walls.median, cand_own = cand_owns.median;
  timing_finding f{"timing.own_clock", 8,
                   fmt::format("the candidate's own clock reported {:.3f} ms per block where the judge's wall-clock "
                               "implies {:.3f} ms (the reference: {:.3f} and {:.3f}): both are timed by the "
                               "wall-clock",
                               cand_own, cand_implied, ref_own, ref_implied),
                   {}};
  f.charge.wall_clock = true;
  return f;
}

// Building the inputs: the same generator on the same seeds in both sets, one set after the other
// before each timed pair, so the difference within a pair leaves out what loads both alike. A
// candidate slower at it than the reference worked there on the block to come (family 4,
// batch-and-skip): that excess is part of each of its blocks.
std::optional<timing_finding> slow_build(const trial_blocks& tb, const timing_thresholds& th) {
  const paired p =
      paired_excess(tb.all, th, th.block_jitter_ms, 0.0, [](const block_record& b) { return b.prepare_ms; });
  auto f = excess_finding(
      p, "timing.build", 4,
      "building a block's inputs took the candidate {:.3f} ms where it took the reference {:.3f} ms (the same "
      "generator on the same seeds): it worked there on the block to come, and the {:.3f} ms count in each of "
      "its blocks");
  if (f) f->charge.block_ms = p.excess;
  return f;
}

// A block's span on the set's own clock, from the end of the GPU's wait to its last call, holds
// the calls and, between them, barriers and L2 flushes: the same mechanics in both sets. A
// candidate whose spans hold more beyond its calls ran work there, outside its calls' events
// (family 5, side stream: a kernel of another stream beside a barrier delays the flush after it,
// which holds the whole GPU): by its own clock, that excess counts in each of its blocks. (The
// wall-clock holds it anyway.)
std::optional<timing_finding> long_span(const trial_blocks& tb, const timing_thresholds& th) {
  const paired p = paired_excess(tb.all, th, th.event_resolution_ms, th.span_band_ratio,
                                 [](const block_record& b) { return b.gap_ms; });
  auto f = excess_finding(
      p, "timing.span", 5,
      "the candidate's blocks spent {:.3f} ms between and before their calls where the reference's spent {:.3f} "
      "ms (the same barriers and flushes): it ran work there, outside its calls' events, and the {:.3f} ms count "
      "in each of its blocks");
  if (f) f->charge.own_clock_ms = p.excess;
  return f;
}

// Reference blocks right after a candidate block against those after a reference block. A set
// that runs after the other one can be slower for two reasons: work the candidate left running
// (family 6, background worker: only the reference's blocks after the candidate suffer), or the
// switch itself (cold caches of a host-bound call: both sets' blocks after the other set's
// suffer). Either way each set is then timed by its blocks after a block of its own: that leaves
// out the reference blocks the candidate slowed, and keeps in the candidate's the work it left
// running into its own next block; discounting the reference's switches alone would charge an
// honest candidate for them. Per call by the clock `so_far` times them with.
std::optional<timing_finding> after_switch(const trial_blocks& tb, const timing_thresholds& th,
                                           const timing_charge& so_far) {
  auto split = [&](const std::vector<const block_record*>& bs, set_role self) {
    std::vector<double> after_other, after_self;
    for (const auto* b : bs) {
      if (!b->after) continue;
      const double per_call =
          so_far.wall_clock
              ? wall_clock_ms(tb, *b, so_far) / static_cast<double>(std::max<std::size_t>(1, b->ms.size()))
              : median_of(b->ms);
      (*b->after == self ? after_self : after_other).push_back(per_call);
    }
    return std::pair{after_other, after_self};
  };
  const auto [ref_after_cand, ref_after_ref] = split(tb.ref, set_role::reference);
  const auto [cand_after_ref, cand_after_cand] = split(tb.cand, set_role::candidate);
  if (ref_after_cand.size() < th.min_samples || ref_after_ref.size() < th.min_samples) return std::nullopt;
  const median_interval slow_i = median_with_interval(ref_after_cand, th.confidence),
                        fast_i = median_with_interval(ref_after_ref, th.confidence);
  if (!beyond(slow_i, fast_i, th.after_switch_ratio, th.after_switch_floor_ms, th)) return std::nullopt;
  const double slow = slow_i.median, fast = fast_i.median;
  const bool cand_too = cand_after_cand.size() >= th.min_samples;
  auto or_dash = [](const std::vector<double>& v) {
    return v.empty() ? std::string("-") : fmt::format("{:.4f}", median_of(v));
  };
  timing_finding f{"timing.after_switch", 6,
                   fmt::format("reference blocks right after a candidate block took {:.4f} ms per call, those after "
                               "a reference block {:.4f} ms (the candidate's: {} after a reference block, {} after "
                               "its own): work the candidate left running, or the switch between the sets, slowed "
                               "the reference; only blocks after a block of the same set count{}",
                               slow, fast, or_dash(cand_after_ref), or_dash(cand_after_cand),
                               cand_too ? "" : " (the reference's only: too few candidate blocks after its own)"),
                   {}};
  f.charge.reference_after_own_only = true;
  f.charge.candidate_after_own_only = cand_too;
  return f;
}

// A block's calls have inputs of their own, all of them made before its first call: a candidate
// can find the others' and do their work in one call, batched (family 4, batch-and-skip: one
// collective for all), the others then served from it. The longest call's share of its block
// shows it: about 1/n for an honest block of n calls, near 1 for such a one. Far above the
// reference's share (and an even split's), each of the candidate's calls counts as its block's
// longest.
std::optional<timing_finding> batching(const trial_blocks& tb, const timing_thresholds& th) {
  auto longest_share = [](const std::vector<const block_record*>& bs) {
    std::vector<double> v;
    for (const auto* b : bs)
      if (const double s = sum(b->ms); b->ms.size() > 1 && s > 0) v.push_back(longest(b->ms) / s);
    return median_of(v);
  };
  const double ref_share = longest_share(tb.ref), cand_share = longest_share(tb.cand);
  const double block_size = static_cast<double>(tb.cand.front()->ms.size());
  if (!(block_size > 1 && cand_share > th.batch_share_ratio * ref_share &&
        cand_share > th.batch_share_ratio / block_size))
    return std::nullopt;
  timing_finding f{"timing.batching", 4,
                   fmt::format("the candidate's longest call took {:.0f}% of its block's time where the reference's "
                               "took {:.0f}% (blocks of {} calls): it did several calls' work in one, and each of "
                               "its calls counts as its block's longest",
                               100 * cand_share, 100 * ref_share, static_cast<int>(block_size)),
                   {}};
  f.charge.longest_call = true;
  return f;
}

// The blocks of `bs` that count: those after a block of their own set where `after_own_only`.
std::vector<const block_record*> counted(const std::vector<const block_record*>& bs, set_role self,
                                         bool after_own_only) {
  if (!after_own_only) return bs;
  std::vector<const block_record*> out;
  for (const auto* b : bs)
    if (b->after && *b->after == self) out.push_back(b);
  return out;
}

// A call's time is its block's mean, with what `c` charges the candidate's blocks: work moved from
// one call of a block into another counts where it was done. Per block.
std::vector<double> block_times(const trial_blocks& tb, const std::vector<const block_record*>& bs,
                                const timing_charge& c) {
  std::vector<double> out;
  for (const auto* b : bs) {
    const double n = static_cast<double>(std::max<std::size_t>(1, b->ms.size()));
    const bool cand_block = b->who == set_role::candidate;
    const double own = sum(b->ms) + (cand_block ? c.own_clock_ms : 0.0);
    double each = ((c.wall_clock ? wall_clock_ms(tb, *b, c) : own) + (cand_block ? c.block_ms : 0.0)) / n;
    if (cand_block && c.longest_call) each = std::max(each, longest(b->ms));
    out.push_back(each);
  }
  return out;
}

// Each block's time once per call of it.
std::vector<double> call_times(const std::vector<const block_record*>& bs, const std::vector<double>& per_block) {
  std::vector<double> out;
  for (std::size_t i = 0; i < bs.size(); ++i) out.insert(out.end(), bs[i]->ms.size(), per_block[i]);
  return out;
}

// The k-th counted reference block against the k-th counted candidate block: neighbours in time
// (the order A B B A keeps them within a pair or two), so drift over the trial drops out of each
// ratio.
std::vector<double> log_ratios(const std::vector<double>& ref, const std::vector<double>& cand) {
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(ref.size(), cand.size()); ++i)
    if (ref[i] > 0 && cand[i] > 0) out.push_back(std::log(ref[i] / cand[i]));
  return out;
}

}  // namespace

trial_timing judge_timing(const std::vector<block_record>& blocks, const timing_thresholds& th) {
  trial_timing t;
  trial_blocks tb{blocks, blocks_of(blocks, set_role::reference), blocks_of(blocks, set_role::candidate), {}, 0, 0};
  for (const auto& b : blocks)
    if (b.null) tb.null_walls.push_back(b.wall_ms);
  tb.null_wall = median_of(tb.null_walls);
  // How far a block's wall-clock moves with no call in it (the null blocks, on the judge's clock),
  // at least the clock's jitter.
  tb.noise_ms = std::max(th.block_jitter_ms, spread(tb.null_walls));
  if (tb.ref.empty() || tb.cand.empty()) return t;

  // The checks in order: a later one reads the clock the earlier ones chose.
  timing_charge charge;
  auto take = [&](std::optional<timing_finding> f) {
    if (!f) return;
    charge.add(f->charge);
    t.flags.push_back(std::move(*f));
  };
  take(late_commit(tb, th));
  take(own_clock(tb, th, charge));
  take(slow_build(tb, th));
  take(long_span(tb, th));
  take(after_switch(tb, th, charge));
  take(batching(tb, th));

  t.wall_clock = charge.wall_clock;
  const auto ref = counted(tb.ref, set_role::reference, charge.reference_after_own_only);
  const auto cand = counted(tb.cand, set_role::candidate, charge.candidate_after_own_only);
  const std::vector<double> ref_blocks = block_times(tb, ref, charge), cand_blocks = block_times(tb, cand, charge);
  t.reference_ms = call_times(ref, ref_blocks);
  t.candidate_ms = call_times(cand, cand_blocks);
  t.log_ratios = log_ratios(ref_blocks, cand_blocks);
  return t;
}

}  // namespace pk::bench
