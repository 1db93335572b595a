#include "bench/eval/timing_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace pk::bench {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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

// The jitter of the judge's clock of one block (a round trip varies by tens of microseconds).
constexpr double block_jitter_ms = 0.02;
// What a set's own clock resolves within a block (CUDA events: about half a microsecond).
constexpr double event_resolution_ms = 0.002;

// Twice the median absolute deviation: a spread that one stray reading does not move.
double spread(const std::vector<double>& v) {
  const double m = median(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::abs(x - m));
  return 2 * median(dev);
}

// The median over timed pairs of the candidate's figure less the reference's, where it exceeds
// three standard errors of that median (and floor_ms, the clock's resolution); an excess of 0
// otherwise. Both figures of a pair come from the same seeds and mechanics, so what loads both sets
// alike drops out.
struct paired {
  double excess = 0, cand = 0, ref = 0;  ///< the excess; the candidate's and the reference's medians
};

template <class Field>
paired paired_excess(const std::vector<block_record>& blocks, double floor_ms, Field field) {
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
  if (diffs.size() < 3) return p;
  p.cand = median(c);
  p.ref = median(r);
  // A median's standard error from the spread: sigma = 1.4826 MAD, SE = 1.2533 sigma / sqrt(n).
  const double se = 1.2533 * 1.4826 * (spread(diffs) / 2) / std::sqrt(static_cast<double>(diffs.size()));
  const double excess = median(diffs);
  if (excess > std::max(3 * se, floor_ms)) p.excess = excess;
  return p;
}

// The excess of `p`, said in `flags` (`why` gets the candidate's median, the reference's and the
// excess) when there is one.
double charged(const paired& p, std::vector<std::string>& flags,
               fmt::format_string<double, double, double> why) {
  if (p.excess > 0) flags.push_back(fmt::vformat(why, fmt::make_format_args(p.cand, p.ref, p.excess)));
  return p.excess;
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
    const double last = median(mine.back()->ms), before = median(mine[mine.size() - 2]->ms);
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
    if (!mine.empty()) per_call = std::max(per_call, median(mine.back()->ms));
  }
  int want = o.min_calls;
  if (per_call > 0) want = std::max(want, static_cast<int>(std::ceil(o.min_ms / per_call)));
  want = std::min(want, o.max_calls);
  const int block = std::max(1, o.block_calls);
  return std::max(1, (want + block - 1) / block);
}

trial_timing judge_timing(const std::vector<block_record>& blocks) {
  trial_timing t;
  std::vector<double> null_walls;
  for (const auto& b : blocks)
    if (b.null) null_walls.push_back(b.wall_ms);
  const double null_wall = median(null_walls);
  // How far a block's wall-clock moves with no call in it (the null blocks, on the judge's clock),
  // at least the clock's jitter. Timed by the wall-clock, no block counts for less: below it a
  // reading is noise, and the ratio of two noises (or a reading of zero) is no speedup.
  const double noise_ms = std::max(block_jitter_ms, spread(null_walls));
  const auto ref = blocks_of(blocks, set_role::reference);
  const auto cand = blocks_of(blocks, set_role::candidate);
  if (ref.empty() || cand.empty()) return t;

  // Commits: the same digests of outputs of the same size in both sets. A candidate that takes
  // 25% (plus 50 us) longer made its outputs when asked for them, not in its block: the excess
  // is its blocks' time.
  auto commits = [](const std::vector<const block_record*>& bs) {
    std::vector<double> out;
    for (const auto* b : bs)
      if (b->commit_ms > 0) out.push_back(b->commit_ms);
    return out;
  };
  const std::vector<double> ref_commits = commits(ref), cand_commits = commits(cand);
  const double ref_commit = median(ref_commits);
  const bool late_outputs =
      !ref_commits.empty() && !cand_commits.empty() && median(cand_commits) > 1.25 * ref_commit + 0.05;
  auto implied = [&](const block_record& b) {
    const double late = late_outputs && b.who == set_role::candidate ? std::max(0.0, b.commit_ms - ref_commit) : 0.0;
    return implied_ms(b, null_wall) + late;
  };
  if (late_outputs) {
    t.wall_clock = true;
    t.flags.push_back(fmt::format(
        "the candidate's commits to its outputs took {:.3f} ms per block where the reference's took {:.3f} ms: its "
        "outputs were made after its blocks answered, and that time counts in its blocks (both are timed by the "
        "wall-clock)",
        median(cand_commits), ref_commit));
  }

  // The candidate's own clock against the judge's: the ratio of wall-clock (less the null block's)
  // to the sets' own sums, for each set. An honest candidate's ratio is the reference's.
  auto ratio_parts = [&](const std::vector<const block_record*>& bs) {
    std::vector<double> walls, own;
    for (const auto* b : bs) {
      walls.push_back(implied(*b));
      own.push_back(sum(b->ms));
    }
    return std::pair{median(walls), median(own)};
  };
  const auto [ref_implied, ref_own] = ratio_parts(ref);
  const auto [cand_implied, cand_own] = ratio_parts(cand);
  const double ref_ratio = ref_own > 0 ? ref_implied / ref_own : 1.0;
  // 20% beyond the reference's own ratio, plus the jitter of the judge's clock of a block (medians
  // over a trial's blocks).
  const bool own_clock_fails =
      !null_walls.empty() && cand_implied > 1.2 * std::max(ref_ratio, 1.0) * cand_own + block_jitter_ms;
  if (own_clock_fails && !late_outputs) {
    t.wall_clock = true;
    t.flags.push_back(fmt::format(
        "the candidate's own clock reported {:.3f} ms per block where the judge's wall-clock implies {:.3f} ms "
        "(the reference: {:.3f} and {:.3f}): both are timed by the wall-clock",
        cand_own, cand_implied, ref_own, ref_implied));
  }

  auto wall_clock_ms = [&](const block_record& b) { return std::max(implied(b), noise_ms); };

  // Building the inputs: the same generator on the same seeds in both sets, one set after the other
  // before each timed pair, so the difference within a pair leaves out what loads both alike. A
  // candidate slower at it than the reference, by more than three standard errors of the median
  // difference (and the clock's jitter), worked there on the block to come: that excess is part of
  // each of its blocks.
  const double prepare_excess = charged(
      paired_excess(blocks, block_jitter_ms, [](const block_record& b) { return b.prepare_ms; }), t.flags,
      "building a block's inputs took the candidate {:.3f} ms where it took the reference {:.3f} ms (the same "
      "generator on the same seeds): it worked there on the block to come, and the {:.3f} ms count in each of "
      "its blocks");

  // A block's span on the set's own clock, from the end of the GPU's wait to its last call, holds
  // the calls and, between them, barriers and L2 flushes: the same mechanics in both sets. A
  // candidate whose spans hold more beyond its calls ran work there, outside its calls' events (a
  // kernel of another stream beside a barrier delays the flush after it, which holds the whole
  // GPU): by its own clock, that excess counts in each of its blocks. (The wall-clock holds it
  // anyway.)
  const double gap_excess = charged(
      paired_excess(blocks, event_resolution_ms, [](const block_record& b) { return b.gap_ms; }), t.flags,
      "the candidate's blocks spent {:.3f} ms between and before their calls where the reference's spent {:.3f} "
      "ms (the same barriers and flushes): it ran work there, outside its calls' events, and the {:.3f} ms count "
      "in each of its blocks");

  // Reference blocks right after a candidate block against those after a reference block. A set
  // that runs after the other one can be slower for two reasons: work the candidate left running
  // (only the reference's blocks after the candidate suffer), or the switch itself (cold caches
  // of a host-bound call: both sets' blocks after the other set's suffer). Either way each set is
  // then timed by its blocks after a block of its own: that leaves out the reference blocks the
  // candidate slowed, and keeps in the candidate's the work it left running into its own next
  // block; discounting the reference's switches alone would charge an honest candidate for them.
  std::vector<const block_record*> ref_used = ref, cand_used = cand;
  {
    auto split = [&](const std::vector<const block_record*>& bs, set_role self) {
      std::vector<double> after_other, after_self;
      std::vector<const block_record*> clean;
      for (const auto* b : bs) {
        const double per_call = t.wall_clock ? wall_clock_ms(*b) / static_cast<double>(std::max<std::size_t>(1, b->ms.size()))
                                             : median(b->ms);
        if (!b->after) continue;
        if (*b->after == self) {
          after_self.push_back(per_call);
          clean.push_back(b);
        } else {
          after_other.push_back(per_call);
        }
      }
      return std::tuple{after_other, after_self, clean};
    };
    const auto [ref_after_cand, ref_after_ref, ref_clean] = split(ref, set_role::reference);
    const auto [cand_after_ref, cand_after_cand, cand_clean] = split(cand, set_role::candidate);
    if (ref_after_cand.size() >= 3 && ref_after_ref.size() >= 3) {
      const double slow = median(ref_after_cand), fast = median(ref_after_ref);
      if (slow > 1.03 * fast + 0.005) {
        const bool cand_too = cand_after_cand.size() >= 3;
        t.flags.push_back(fmt::format(
            "reference blocks right after a candidate block took {:.4f} ms per call, those after a reference "
            "block {:.4f} ms (the candidate's: {} after a reference block, {} after its own): work the candidate "
            "left running, or the switch between the sets, slowed the reference; only blocks after a block of "
            "the same set count{}",
            slow, fast, cand_after_ref.empty() ? std::string("-") : fmt::format("{:.4f}", median(cand_after_ref)),
            cand_after_cand.empty() ? std::string("-") : fmt::format("{:.4f}", median(cand_after_cand)),
            cand_too ? "" : " (the reference's only: too few candidate blocks after its own)"));
        ref_used = ref_clean;
        if (cand_too) cand_used = cand_clean;
      }
    }
  }

  // A block's calls have inputs of their own, all of them made before its first call: a candidate
  // can find the others' and do their work in one call, batched (one collective for all), the
  // others then served from it. The longest call's share of its block shows it: about 1/n for an
  // honest block of n calls, near 1 for such a one. Above twice the reference's share (and 2/n),
  // each of the candidate's calls counts as its block's longest.
  auto longest_share = [](const std::vector<const block_record*>& bs) {
    std::vector<double> v;
    for (const auto* b : bs)
      if (const double s = sum(b->ms); b->ms.size() > 1 && s > 0)
        v.push_back(longest(b->ms) / s);
    return median(v);
  };
  const double ref_share = longest_share(ref), cand_share = longest_share(cand);
  const double block_size = static_cast<double>(cand.front()->ms.size());
  const bool lumped = block_size > 1 && cand_share > 2 * ref_share && cand_share > 2 / block_size;
  if (lumped)
    t.flags.push_back(fmt::format(
        "the candidate's longest call took {:.0f}% of its block's time where the reference's took {:.0f}% (blocks "
        "of {} calls): it did several calls' work in one, and each of its calls counts as its block's longest",
        100 * cand_share, 100 * ref_share, static_cast<int>(block_size)));

  // A call's time is its block's mean: work moved from one call of a block into another counts
  // where it was done.
  auto calls = [&](const std::vector<const block_record*>& bs) {
    std::vector<double> out;
    for (const auto* b : bs) {
      const double n = static_cast<double>(std::max<std::size_t>(1, b->ms.size()));
      const bool cand_block = b->who == set_role::candidate;
      const double own = sum(b->ms) + (cand_block ? gap_excess : 0.0);
      double each = ((t.wall_clock ? wall_clock_ms(*b) : own) + (cand_block ? prepare_excess : 0.0)) / n;
      if (cand_block && lumped) each = std::max(each, longest(b->ms));
      out.insert(out.end(), b->ms.size(), each);
    }
    return out;
  };
  t.reference_ms = calls(ref_used);
  t.candidate_ms = calls(cand_used);
  return t;
}

}  // namespace pk::bench
