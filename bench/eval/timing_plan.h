// The judge's timing decisions and its reading of the clocks, as pure functions of what the blocks
// reported (so they are tested without any process).
//
// The reference's and the candidate's process sets take turns on the same GPUs, one block of calls
// at a time, in the order A B B A A B ...: clock and thermal drift land on both alike. For every
// block the judge has two clocks: the per-call times the set itself measured (CUDA events; a claim,
// when the set is the candidate's) and its own wall-clock from sending the block to the last rank's
// answer, which follows a device-wide synchronisation in every rank. A null block (the reference's
// set running the block's mechanics with no call) gives the part of the wall-clock that is not the
// calls. Six cross-checks follow, in the order they run; each is a function with a stable id (the
// timing_finding it returns), the hack family of docs/integrity.md it answers, and its thresholds
// in timing_thresholds:
// - timing.late_commit (family 7): after each timed block both sets commit to its outputs
//   (output_commit.h), the same work for outputs of the same size: a candidate whose commits take
//   much longer made its outputs only then, and the excess counts in its blocks' wall-clock;
// - timing.own_clock (family 8): a candidate whose own clock reports far less than the wall-clock
//   implies (a patched timer, work left on another stream or thread) is timed by the wall-clock
//   instead, for both sets alike;
// - timing.build (family 4): before each pair both sets build the inputs of their next block, one
//   set at a time, the same generator on the same seeds: a candidate whose builds take longer
//   beyond the readings' noise did work there, ahead of its block (its answers computed while the
//   inputs were made), and the excess counts in each of its blocks, by either clock;
// - timing.span (family 5): a block's span on the set's own clock (from the end of the GPU's wait
//   to its last call) less its calls holds the barriers and flushes, the same in both sets: a
//   candidate's excess there is work run outside its calls' events, and counts in its blocks;
// - timing.after_switch (family 6): reference blocks that directly follow a candidate block must
//   not be slower than those that follow a reference block (work a candidate left running on the
//   GPUs would slow the reference and inflate the speedup); if they are, only the latter count;
// - timing.batching (family 4): a call's time is the mean of its block (the five calls of a block
//   have independent inputs, so work shifted between them still counts in full); a candidate whose
//   longest call holds far more of its block's time than the reference's did several calls' work
//   in one, batched (all of a block's inputs exist before its first call), and each of its calls
//   counts as its block's longest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "bench/eval/sets/rank_set.h"

namespace pk::bench {

/// Timing knobs.
/// min_ms and max_calls are small on purpose: a trial's self-vs-self spread (about +-1.5% on H200) does not
/// come from the number of calls (the median of 800 calls of problem 1 is known to 0.2%), and each call costs
/// the host about 160 us to enqueue behind its flush and barrier, in each set.
struct timing_options {
  int warmup_min_calls = 20;
  double warmup_min_ms = 100;
  double first_warmup_min_ms = 300;  ///< the first timing of a run: clocks, cuBLAS and NCCL still settle
  double warmup_max_ms = 3000;
  double cpu_warmup_max_ms = 1000;  ///< on CPU (gloo): the host's clock settles at once, and cores are few
  int min_calls = 100;
  double min_ms = 30;
  int max_calls = 400;       ///< 80 blocks per set
  int block_calls = 5;       ///< calls per block, each with its own inputs
  int checked_calls = 3;     ///< timed calls per trial whose outputs are compared (chosen in secret)
  bool cuda_graph = false;
};

/// One block as the judge saw it.
struct block_record {
  set_role who = set_role::reference;
  bool null = false;                ///< the reference set's mechanics without a call
  bool warmup = false;
  int pair = -1;                    ///< the timed pair (the same inputs ran in both sets' blocks)
  std::vector<double> ms;           ///< per call, the maximum over ranks of the set's own clock
  double wall_ms = 0;               ///< the judge's clock
  double enqueue_ms = 0;            ///< the host's time to enqueue the block (maximum over ranks)
  double commit_ms = 0;             ///< the judge's clock of the commit after a timed block (0: none)
  std::optional<double> prepare_ms;  ///< the judge's clock of building the block's inputs
  std::optional<double> gap_ms;     ///< the set's span of the block less its calls, the most over ranks
  std::optional<set_role> after;    ///< whose block ran just before on the GPUs (nullopt: none, or null)
};

/// Whether the warm-up may stop: every set had enough calls and time and its per-block median
/// settled (two blocks in a row within 5%), or the cap was reached. `spent_ms` since it began.
bool warmup_done(const std::vector<block_record>& warmup, const timing_options& o, double spent_ms, bool first);

/// The GPU spin before each timed block: 1.25 x the host's typical (75th percentile) time to
/// enqueue a warm-up block, within [0.1, 2] ms.
double hold_ms(const std::vector<block_record>& warmup);

/// How many timed pairs: at least min_calls calls and min_ms of calls per set, at most max_calls.
int timed_pairs(const std::vector<block_record>& warmup, const timing_options& o);

/// How far a candidate's figure may stand from the reference's before a cross-check charges it.
/// Every comparison is of medians with their intervals at `confidence` (bench/eval/paired_stats.h):
/// a check fires where the candidate's interval lies wholly beyond the reference's, by the
/// ratio (room for two honest sets' spread on the same GPUs: an offset that belongs to a pair of
/// processes for a whole evaluation) and the floor (ms, what a clock cannot resolve). The checks
/// of commits and switches, which only choose the clock, also fire where the medians alone lie
/// gross_ratio times beyond that bound. Every threshold of the cross-checks is here, and
/// only here.
struct timing_thresholds {
  /// The judge's clock of one block jitters by tens of microseconds (a round trip).
  double block_jitter_ms = 0.02;
  /// What a set's own clock resolves within a block (CUDA events: about half a microsecond).
  double event_resolution_ms = 0.002;
  /// The confidence of every interval: the speedup's, and each check's. At 99% one honest trial in
  /// a hundred read "faster" or "slower" by the interval alone (measured over 400 simulated
  /// trials, tests/bench/timing_plan_test.cc); at 99.9% none did, and 80 pairs still resolve 1%.
  double confidence = 0.999;
  /// Fewer timed pairs, or blocks on one side of a switch, than this decide nothing.
  std::size_t min_samples = 3;
  /// A check that only moves both sets to the judge's wall-clock (fair to both: a false alarm costs
  /// precision, a miss hands a cheat its own clock) also fires where the medians alone stand this
  /// many times beyond its bound. Below about 12 blocks a 99.9% interval is the whole range of the
  /// readings, so one slow reference block on a busy host would otherwise hide a lazy candidate's
  /// tenfold commits; honest medians do not stand 2x apart (a loaded 2-core host spreads single
  /// readings by about 35%).
  double gross_ratio = 2;
  /// timing.late_commit: the low end of the candidate's commits beyond this times the high end of
  /// the reference's, plus late_commit_floor_ms.
  double late_commit_ratio = 1.25;
  double late_commit_floor_ms = 0.05;
  /// timing.own_clock: the low end of the candidate's wall-clock beyond this times the high end of
  /// its own clock and the reference's ratio of the two (plus block_jitter_ms).
  double own_clock_ratio = 1.2;
  /// timing.build: the paired excess of the candidate's builds counts once its interval's low end
  /// passes block_jitter_ms.
  /// timing.span: the paired excess of the candidate's spans counts once its interval's low end
  /// passes this share of the reference's span, and event_resolution_ms. Two honest sets' spans
  /// differ by up to 2% for a whole evaluation (measured on one H200, problem 1); what is hidden
  /// below the band goes uncharged (docs/integrity.md states the bound).
  double span_band_ratio = 0.03;
  /// timing.after_switch: the low end of reference calls after a candidate block beyond this times
  /// the high end of those after a reference block, plus after_switch_floor_ms.
  double after_switch_ratio = 1.03;
  double after_switch_floor_ms = 0.005;
  /// timing.batching: the candidate's longest call's share of its block beyond this times the
  /// reference's, and this times an even split's (1/n).
  double batch_share_ratio = 2;
};

/// What a cross-check charges the candidate with; the default charges nothing.
struct timing_charge {
  bool wall_clock = false;                    ///< both sets are timed by the judge's wall-clock
  std::optional<double> commit_allowance_ms;  ///< a candidate block's commit beyond this counts in its wall-clock
  double block_ms = 0;                        ///< counts in each candidate block, by either clock
  double own_clock_ms = 0;                    ///< counts in each candidate block's own clock
  bool reference_after_own_only = false;      ///< only reference blocks after a reference block count
  bool candidate_after_own_only = false;      ///< only candidate blocks after a candidate block count
  bool longest_call = false;                  ///< each candidate call counts as its block's longest

  /// Both charges at once.
  void add(const timing_charge& other);
};

/// What one timing check found: its stable id (tests and docs/integrity.md name checks by it), the
/// hack family of docs/integrity.md it answers, the flag in words for the report, and the charge.
struct timing_finding {
  std::string id;
  int family = 0;
  std::string flag;
  timing_charge charge;
};

/// The trial's timing as judged.
struct trial_timing {
  std::vector<double> reference_ms, candidate_ms;  ///< per call (its block's mean)
  /// Per pair of counted blocks (the k-th reference block that counts with the k-th candidate
  /// block), log(reference per call / candidate per call): the speedup is their median's exp.
  std::vector<double> log_ratios;
  bool wall_clock = false;            ///< the judge's wall-clock replaced the sets' own clocks
  std::vector<timing_finding> flags;  ///< what the cross-checks found
};

/// Reads the timed and null blocks of one trial.
trial_timing judge_timing(const std::vector<block_record>& blocks, const timing_thresholds& th = {});

}  // namespace pk::bench
