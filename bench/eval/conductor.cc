#include "bench/eval/conductor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "bench/eval/process_census.h"
#include "bench/suite/problem.h"

namespace pk::bench {

using json = nlohmann::json;

namespace {

using clock = std::chrono::steady_clock;

struct stop_conducting {};  // a failure was recorded in the outcome

// Every rank's reply, by set; a set that was not asked has none.
struct set_replies {
  std::vector<json> candidate;
  std::vector<json> reference;
  std::vector<json>& of(set_role who) { return who == set_role::reference ? reference : candidate; }
};

// The stream of the timed calls' seeds; trial t's is stream t.
constexpr std::uint64_t timing_stream = 0x7143ed0000000000ULL;

class conductor {
 public:
  conductor(rank_set* ref, rank_set& cand, const conduct_plan& plan, seed_source& seeds, seed_source& secret)
      : ref_(ref), cand_(cand), plan_(plan), seeds_(seeds), calls_(seeds.derive(timing_stream)), secret_(secret) {}

  conduct_outcome run() {
    try {
      step("ready", [&] { ready(); });
      for (int t : plan_.trials) {
        step(fmt::format("trial {}", t), [&] { trial(t); });
        if (plan_.perf) step(fmt::format("timing {}", t), [&] { timing(t); });
        census(fmt::format("trial {}", t));
      }
      step("shutdown", [&] { shutdown(); });
    } catch (const stop_conducting&) {
    }
    return std::move(out_);
  }

 private:
  int world() const { return cand_.world(); }

  template <class F>
  void step(const std::string& name, F body) {
    const auto t0 = clock::now();
    body();
    out_.steps.emplace_back(name, std::chrono::duration<double>(clock::now() - t0).count());
  }

  std::vector<rank_set*> both() {
    std::vector<rank_set*> s{&cand_};
    if (ref_) s.push_back(ref_);
    return s;
  }

  // Waits for every rank of `sets` to answer; then, unless the sets are about to leave, stops them
  // until their next command: nothing of a set runs while the other is timed.
  set_replies await(const std::vector<rank_set*>& sets, const std::string& phase, double timeout_s,
                    bool pause_after = true) {
    std::vector<std::vector<json>> replies;
    const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                             std::chrono::duration<double>(timeout_s));
    if (auto f = await_replies(sets, phase, deadline, replies)) {
      f->limit_s = timeout_s;
      out_.failure = *f;
      out_.failed = f->set;
      throw stop_conducting{};
    }
    if (pause_after)
      for (rank_set* s : sets) s->pause();
    set_replies named;
    for (std::size_t i = 0; i < sets.size(); ++i)
      (sets[i] == &cand_ ? named.candidate : named.reference) = std::move(replies[i]);
    return named;
  }

  // The candidate's reply is a claim: a malformed one is the candidate's failure.
  [[noreturn]] void tampered(int rank, const std::string& phase, const std::string& what) {
    out_.failure = rank_failure{rank_failure::kind::tampered, rank, phase, "", what};
    out_.failed = set_role::candidate;
    throw stop_conducting{};
  }

  void threads_check(const std::vector<json>& replies, const std::string& phase) {
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const int n = replies[r].value("threads", 0);
      if (n > threads_before_) {
        out_.background.push_back(fmt::format(
            "rank {} had {} Python threads running after {} ({} before the candidate was imported)", r, n, phase,
            threads_before_));
        throw stop_conducting{};
      }
    }
  }

  void census(const std::string& phase) {
    std::vector<int> pids;
    for (int r = 0; r < world(); ++r) pids.push_back(cand_.rank_pid(r));
    const auto stray = stray_processes(pids, sandboxed_);
    if (stray.empty()) return;
    for (const auto& s : stray) out_.background.push_back(fmt::format("after {}, still running: {}", phase, s));
    throw stop_conducting{};
  }

  void ready() {
    if (plan_.progress) plan_.progress("starting the ranks (imports, process groups)");
    const auto replies = await(both(), "import", plan_.compile_timeout_s);
    for (const json& r : replies.candidate) threads_before_ = std::max(threads_before_, r.value("threads_before", 1));
    // How the reference's ranks hold the GPU before a block (the candidate's say the same, as a claim).
    if (ref_)
      for (const json& r : replies.reference)
        if (const std::string h = r.value("hold", ""); !h.empty() && h != "every multiprocessor") hold_note_ = h;
    // Without a sandbox the ranks have no pid namespace of their own: count their descendants.
    sandboxed_ = plan_.sandboxed;
  }

  // The seeds of trial t: a stream of their own (seed_source::derive), so that trial t's inputs,
  // and its cached reference outputs, do not depend on what was drawn before.
  std::vector<std::int64_t> rank_seeds(seed_source& trial_seeds) {
    std::vector<std::int64_t> s;
    for (int r = 0; r < world(); ++r) s.push_back(trial_seeds.next());
    return s;
  }

  void trial(int t) {
    const std::string phase = fmt::format("trial {}", t);
    trial_record rec;
    rec.trial = t;
    rec.file = fmt::format("trial{}.st", t);
    seed_source trial_seeds = seeds_.derive(static_cast<std::uint64_t>(t));
    const auto seeds = rank_seeds(trial_seeds);
    const std::int64_t shared = trial_seeds.next();
    const bool with_ref = ref_ && plan_.reference_trials.count(t);
    std::vector<rank_set*> sets{&cand_};
    if (with_ref) sets.push_back(ref_);
    for (rank_set* s : sets) s->resume();
    for (rank_set* s : sets)
      for (int r = 0; r < world(); ++r)
        s->send(r, {{"cmd", "trial"},
                    {"trial", t},
                    {"seed", seeds[static_cast<std::size_t>(r)]},
                    {"shared_seed", shared},
                    {"file", rec.file},
                    {"second_distribution", t == second_distribution_trial}});
    const auto replies = await(sets, phase, plan_.phase_timeout_s);
    threads_check(replies.candidate, phase);
    if (with_ref) {
      std::vector<std::vector<bool>> mutated;
      for (const json& r : replies.reference) mutated.push_back(r.value("mutated", std::vector<bool>{}));
      rec.mutated = std::move(mutated);
    }
    census(phase);
    out_.trials.push_back(std::move(rec));
  }

  rank_set& set_of(set_role who) { return who == set_role::reference ? *ref_ : cand_; }
  static int slot(set_role who) { return who == set_role::reference ? 0 : 1; }

  // Both sets build the inputs of their next block, the same per-rank, per-call seeds, one set at a
  // time on the judge's clock: the command runs in the candidate's process, and work it does there
  // on the block to come shows as time the reference's same command did not take (judge_timing).
  // The set whose block comes first builds last, so its block follows its own work on the GPUs.
  void prepare_pair(int t, const std::array<set_role, 2>& order) {
    const std::int64_t shared = calls_.next();
    const auto seeds = call_seeds();
    for (auto who = order.rbegin(); who != order.rend(); ++who) {
      rank_set& s = set_of(*who);
      s.resume();
      const auto t0 = clock::now();
      for (int r = 0; r < world(); ++r)
        s.send(r, {{"cmd", "prepare"}, {"trial", t}, {"seeds", seeds[static_cast<std::size_t>(r)]},
                   {"shared_seed", shared}, {"second_distribution", t == second_distribution_trial}});
      await({&s}, fmt::format("timing {}", t), plan_.phase_timeout_s);
      prepare_ms_[slot(*who)] = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    }
  }

  // One block of `who`'s set on the inputs it prepared last (none for a null block).
  block_record block(set_role who, int t, double hold, bool null, bool warmup, int pair) {
    rank_set& s = set_of(who);
    const std::string phase = fmt::format("timing {}", t);
    const int calls = plan_.timing.block_calls;
    const bool commits = !null && !warmup;
    s.resume();
    const auto t0 = clock::now();
    s.send_all({{"cmd", "block"},
                {"block", blocks_run_++},
                {"hold_ms", hold},
                {"null", null},
                {"calls", calls},
                {"commit", commits}});
    const auto replies = await({&s}, phase, plan_.phase_timeout_s, !commits).of(who);
    block_record b;
    b.who = who;
    b.null = null;
    b.warmup = warmup;
    b.pair = pair;
    b.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (!null) b.prepare_ms = std::exchange(prepare_ms_[slot(who)], std::nullopt);
    b.ms.assign(static_cast<std::size_t>(calls), 0.0);
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const json& ms = replies[r].value("ms", json());
      const json& enq = replies[r].value("enqueue_ms", json());
      const json& span = replies[r].value("span_ms", json());
      if (!ms.is_array() || ms.size() != static_cast<std::size_t>(calls) || !enq.is_number() || !span.is_number())
        tampered(static_cast<int>(r), phase, "answered a timing block with a malformed report");
      double calls_ms = 0;
      for (std::size_t i = 0; i < ms.size(); ++i) {
        const double v = ms[i].is_number() ? ms[i].get<double>() : -1;
        if (!std::isfinite(v) || v < 0) tampered(static_cast<int>(r), phase, "reported an impossible call time");
        b.ms[i] = std::max(b.ms[i], v);
        calls_ms += v;
      }
      b.enqueue_ms = std::max(b.enqueue_ms, enq.get<double>());
      if (!std::isfinite(span.get<double>())) tampered(static_cast<int>(r), phase, "reported an impossible block span");
      // The calls lie inside the span: a span shorter than them is no reading.
      b.gap_ms = std::max(b.gap_ms.value_or(0.0), std::max(0.0, span.get<double>() - calls_ms));
    }
    if (commits) commit(b, s, phase);
    if (who == set_role::candidate) threads_check(replies, phase);
    b.after = last_on_gpu_;
    last_on_gpu_ = null ? std::optional<set_role>(set_role::reference) : std::optional<set_role>(who);
    if (null) b.after.reset();
    return b;
  }

  // The set commits to every output of the block it just ran (output_commit.h), in a second answer
  // to the block's command, on the judge's clock from the block's answer on: outputs made only now
  // show in b.commit_ms.
  void commit(block_record& b, rank_set& s, const std::string& phase) {
    const auto t0 = clock::now();
    s.await_second_answer();
    const auto replies = await({&s}, phase, plan_.phase_timeout_s).of(b.who);
    b.commit_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (b.who != set_role::candidate) return;
    last_commits_.assign(replies.size(), {});
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const json& calls = replies[r].value("commit", json());
      if (!calls.is_array() || calls.size() != b.ms.size())
        tampered(static_cast<int>(r), phase, "answered the judge's commit without a commitment to each call's outputs");
      for (const json& call : calls) {
        auto c = commits_from_json(call);
        if (!c) tampered(static_cast<int>(r), phase, "answered the judge's commit with a malformed commitment");
        last_commits_[r].push_back(std::move(*c));
      }
    }
  }

  std::vector<std::vector<std::int64_t>> call_seeds() {
    std::vector<std::vector<std::int64_t>> s(static_cast<std::size_t>(world()));
    for (auto& rank : s)
      for (int i = 0; i < plan_.timing.block_calls; ++i) rank.push_back(calls_.next());
    return s;
  }

  // A B, B A, A B ...: drift lands on both sets alike.
  static std::array<set_role, 2> pair_order(int pair) {
    return pair % 2 == 0 ? std::array{set_role::reference, set_role::candidate}
                         : std::array{set_role::candidate, set_role::reference};
  }

  void timing(int t) {
    if (!ref_) return;
    if (plan_.progress) plan_.progress(fmt::format("timing trial {}", t));
    trial_record& rec = out_.trials.back();
    const timing_options& o = plan_.timing;
    last_on_gpu_.reset();

    // Warm-up: the sets alternate until both have settled.
    std::vector<block_record> warm;
    const auto w0 = clock::now();
    double hold = 0.5;
    for (int round = 0;; ++round) {
      const auto order = pair_order(round);
      prepare_pair(t, order);
      for (set_role who : order) warm.push_back(block(who, t, hold, false, true, -1));
      const double spent = std::chrono::duration<double, std::milli>(clock::now() - w0).count();
      if (warmup_done(warm, o, spent, first_timing_)) break;
      hold = hold_ms(warm);
    }
    first_timing_ = false;
    hold = hold_ms(warm);

    // Timed pairs, a few of them checked; null blocks spread over the trial.
    const int pairs = timed_pairs(warm, o);
    std::vector<std::pair<int, int>> checked;  // (pair, call), chosen in secret
    const int n_checks = std::min(o.checked_calls, pairs);
    while (static_cast<int>(checked.size()) < n_checks) {
      const int p = static_cast<int>(secret_.next() % pairs);
      if (std::none_of(checked.begin(), checked.end(), [&](const auto& c) { return c.first == p; }))
        checked.emplace_back(p, static_cast<int>(secret_.next() % std::max(1, o.block_calls)));
    }
    std::vector<block_record> timed;
    const int null_every = std::max(1, pairs / 4);
    for (int p = 0; p < pairs; ++p) {
      if (p % null_every == 0) timed.push_back(block(set_role::reference, t, hold, true, false, -1));
      const auto order = pair_order(p);
      prepare_pair(t, order);
      for (set_role who : order) timed.push_back(block(who, t, hold, false, false, p));
      for (const auto& [cp, call] : checked)
        if (cp == p) check(t, call);
    }
    timed.push_back(block(set_role::reference, t, hold, true, false, -1));
    rec.blocks = warm;
    rec.blocks.insert(rec.blocks.end(), timed.begin(), timed.end());
    rec.timing = judge_timing(timed);
    if (!hold_note_.empty())
      rec.timing->flags.push_back({"timing.partial_hold", 5,
                                   fmt::format("the GPU's wait before each block held {}, not every "
                                               "multiprocessor: a kernel on another stream could have run beside "
                                               "it, in neither clock",
                                               hold_note_),
                                   {}});
    if (const std::string why = cand_.pause_limit(); sandboxed_ && !why.empty())
      rec.timing->flags.push_back({"timing.partial_pause", 6,
                                   fmt::format("between its turns only the candidate's rank processes were "
                                               "stopped ({}): a process they started could have run while the "
                                               "reference was timed",
                                               why),
                                   {}});
  }

  // Both sets record the same call of their last block (they ran the same inputs).
  void check(int t, int call) {
    check_record c;
    c.trial = t;
    c.file = fmt::format("check{}.{}.st", t, out_.checks.size());
    const json cmd = {{"cmd", "record_call"}, {"call", call}, {"file", c.file}};
    cand_.resume();
    ref_->resume();
    cand_.send_all(cmd);
    ref_->send_all(cmd);
    const auto replies = await(both(), fmt::format("timing {}", t), plan_.phase_timeout_s);
    for (const json& r : replies.reference) c.mutated.push_back(r.value("mutated", std::vector<bool>{}));
    for (const auto& rank : last_commits_) c.committed.push_back(rank.at(static_cast<std::size_t>(call)));
    out_.checks.push_back(std::move(c));
  }

  void shutdown() {
    for (rank_set* s : both()) s->resume();
    for (rank_set* s : both()) s->send_all({{"cmd", "shutdown"}});
    await(both(), "shutdown", plan_.phase_timeout_s, false);
  }

  rank_set* ref_;
  rank_set& cand_;
  const conduct_plan& plan_;
  seed_source& seeds_;
  seed_source calls_;  ///< the timed calls' seeds, a stream apart from the trials'
  seed_source& secret_;
  conduct_outcome out_;
  int threads_before_ = 1;
  bool sandboxed_ = true;
  bool first_timing_ = true;
  std::string hold_note_;  ///< why the reference's GPU wait held less than the whole GPU (empty: it held all)
  long blocks_run_ = 0;
  std::optional<double> prepare_ms_[2];  ///< the last build of each set's inputs (reference, candidate), until its block
  std::optional<set_role> last_on_gpu_;
  std::vector<std::vector<std::vector<tensor_commit>>> last_commits_;  ///< the last candidate block's, per rank and call
};

}  // namespace

conduct_outcome conduct(rank_set* reference, rank_set& candidate, const conduct_plan& plan, seed_source& seeds,
                        seed_source& secret) {
  return conductor(reference, candidate, plan, seeds, secret).run();
}

}  // namespace pk::bench
