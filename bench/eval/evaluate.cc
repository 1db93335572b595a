#include "bench/eval/evaluate.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/digest.h"
#include "bench/eval/conductor.h"
#include "bench/eval/judging.h"
#include "bench/eval/multicast_scan.h"
#include "bench/eval/reference_cache.h"
#include "bench/eval/seeds.h"
#include "bench/eval/sets/jit_cache.h"
#include "bench/eval/sets/kr_torch_stage.h"
#include "bench/eval/sets/rank_set.h"
#include "bench/eval/sets/staging.h"
#include "bench/eval/untrusted_file.h"
#include "bench/eval/verdict_ladder.h"
#include "bench/eval/worker_plan.h"
#include "bench/suite/roofline.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "sandbox/config.h"
#include "sandbox/environment.h"
#include "sandbox/gpu_devices.h"
#include "sandbox/mounts.h"

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path cache_base(const eval_options& o) {
  return (o.cache_root.empty() ? reference_cache::default_root() : o.cache_root).parent_path();
}

std::vector<int> gpus_for(const eval_options& o) {
  if (o.device != device_kind::cuda) return {};
  if (!o.gpus.empty()) return o.gpus;
  std::vector<int> g;
  for (int i = 0; i < o.world; ++i) g.push_back(i);
  return g;
}

eval_report new_report(const problem& p, const fs::path& solution, const eval_options& o) {
  eval_report rep;
  rep.problem = p.name();
  rep.upstream = p.upstream_root.string();
  rep.solution = solution.string();
  rep.world = o.world;
  rep.device = o.device;
  rep.dtype = p.dtype;
  rep.trials_requested = o.trials;
  rep.sandbox = sandbox::to_string(o.isolation);
  if (o.hardware) {
    const roofline_bound b = roofline(p, o.world, *o.hardware);
    rep.roofline_ms = b.seconds() * 1e3;
    rep.roofline_limiter = b.limiter();
  } else {
    rep.roofline_missing = o.no_hardware;
  }
  return rep;
}

// The plan a set is given: its role, the problem, where its files are.
json plan_for(set_role role, const problem& p, const eval_options& o) {
  json problem = worker_plan(p, o.world);
  problem["reference"] = role == set_role::reference ? json("problem/reference.py") : json(nullptr);
  problem["inputs"] = p.upstream() ? json(nullptr) : json("problem/inputs.py");
  problem["upstream_root"] = p.upstream() ? json("upstream") : json(nullptr);
  return {{"side", to_string(role)},
          {"device", o.device},
          {"problem", problem},
          {"out_dir", staged_out.string()},
          {"cuda_graph", o.timing.cuda_graph},
          {"multicast_off", sandbox::forced_environment()}};
}

// The sandbox every set of this evaluation gets.
set_options set_options_for(const eval_options& o, bool names_kr_torch) {
  set_options s;
  s.world = o.world;
  s.device = o.device;
  s.gpus = gpus_for(o);
  s.isolation = o.isolation;
  s.cache_base = cache_base(o);
  s.hidden = o.hidden;
  s.prebuild_kr = names_kr_torch;
  s.keep_workspace = o.keep_workspace;
  s.progress = o.progress;
  const double commands = 8.0 + 4.0 * o.trials;
  s.wall_limit = std::chrono::milliseconds(static_cast<long long>(
      1000 * (o.compile_timeout_s + o.timeout_s * commands + (o.perf ? 60.0 * o.trials : 0.0))));
  return s;
}

// The reference outputs of every trial: cached ones, or what the reference set just recorded
// (stored into the cache where the seeds are reproducible).
struct reference_files {
  const reference_cache& cache;
  const reference_key& key;
  const problem& p;
  fs::path live_out;  ///< the reference set's output directory
  bool cacheable;

  fs::path file(int trial, int rank, bool live) const {
    return live ? live_out / fmt::format("rank{}", rank) / fmt::format("trial{}.st", trial)
                : cache.output_file(p, key, trial, rank);
  }
};

// The files the judge put in a workspace, by path, with the digest of their contents.
using staged_digests = std::map<fs::path, std::string>;

// The files of `staged` still holding what the judge put there: the post-run scan leaves only
// these out (the worker's own sources name what they refuse), never a path whose contents the
// candidate replaced. ranks.json is the supervisor's account, written after every rank ended; the
// ranks' output in it is text they printed, not code that ran.
std::set<fs::path> unchanged(const fs::path& ws, const staged_digests& staged) {
  std::set<fs::path> same{ws / "ranks.json"};
  for (const auto& [path, want] : staged) {
    try {
      if (digest().add(read_untrusted(ws, fs::relative(path, ws), 64ull << 20)).hex() == want) same.insert(path);
    } catch (const untrusted_file_error&) {
      // Replaced by a link, a FIFO, a directory ...: not the judge's file any more.
    }
  }
  return same;
}

// What the post-run scan found in the candidate's workspace and JIT build directory, described;
// empty when nothing.
std::string scan_what_ran(const fs::path& ws, const fs::path& jit, const staged_digests& ours, const eval_options& o) {
  const std::set<fs::path> skip = unchanged(ws, ours);
  multicast_scan_options so;
  so.clean_cache = multicast_clean_cache(o);
  const std::vector<scan_root> roots{{jit, "JIT build directory"}, {ws, "workspace"}};
  const auto found = scan_multicast_tree(roots, skip, so);
  return found.empty() ? std::string() : describe_multicast(found);
}

staged_digests files_under(const fs::path& dir) {
  staged_digests files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[e.path()] = digest().add_file(e.path()).hex();
  return files;
}

// Starts sets in the pool ahead of need. One that cannot start (no sandbox, pkagent's binary
// replaced) is no fault of the caller: the evaluation that needs it meets the reason when it
// starts its set itself.
void top_up(warm_pool& pool, const set_options& so) noexcept {
  try {
    pool.warm(so);
  } catch (const std::exception&) {
  }
}

// The candidate's set, given its evaluation: the candidate and the input generator staged in its
// workspace, its JIT build directory filled from the cache entry for its source (bound at
// /workspace/ext; without a sandbox, the entry itself), and the files the judge put there (which
// the post-run scan leaves out while their contents are what the judge wrote).
struct candidate_stage {
  jit_cache jit;
  fs::path jit_dir;
  staged_digests ours;

  candidate_stage(rank_set& set, const problem& p, const fs::path& solution, const std::string& code,
                  const eval_options& o)
      : jit(cache_base(o) / "torch-extensions", digest().add(code).hex()) {
    stage_problem(set.workspace(), p, false);
    json plan = plan_for(set_role::candidate, p, o);
    plan["candidate"] = stage_candidate(set.workspace(), solution).string();
    if (set.jit_dir().empty()) {
      jit_dir = jit.path();
      fs::create_directories(jit_dir);
      plan["torch_extensions_dir"] = jit_dir.string();
    } else {
      jit_dir = set.jit_dir();
      jit.copy_into(jit_dir);
    }
    ours = files_under(set.workspace());
    set.go(set_role::candidate, std::move(plan));
    for (const auto& [path, text] : set.written_files()) ours[path] = digest().add(text).hex();
  }
};

}  // namespace

fs::path multicast_clean_cache(const eval_options& o) { return cache_base(o) / "multicast-scan-clean"; }

void warm_sets(const eval_options& o) {
  if (!o.pool || (o.device == device_kind::cuda && o.gpus.empty())) return;
  top_up(*o.pool, set_options_for(o, false));
}

reference_key reference_key_of(const problem& p, const eval_options& o) {
  return {o.world, o.device, p.dtype, o.seed, seed_key_id(judge_seed_key(cache_base(o)))};
}

void check_options(const problem& p, const fs::path& solution, const eval_options& o) {
  if (!p.supports_world(o.world)) {
    std::string sizes;
    for (int w : p.world_sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", w);
    throw std::invalid_argument(fmt::format("problem {} does not support world size {}: use --world with one of {}",
                                            p.name(), o.world, sizes));
  }
  if (o.trials < 1) throw std::invalid_argument("--trials must be at least 1");
  if (!fs::exists(solution))
    throw std::invalid_argument(fmt::format("solution file {} does not exist", solution.string()));
  if (!fs::is_regular_file(solution) || ::access(solution.c_str(), R_OK) != 0)
    throw std::invalid_argument(fmt::format("solution file {} is not a readable file", solution.string()));
  if (o.device == device_kind::cuda) {
    if (!o.gpus.empty() && static_cast<int>(o.gpus.size()) != o.world)
      throw std::invalid_argument(fmt::format("--gpus names {} GPUs but --world is {}: name one GPU per rank",
                                              o.gpus.size(), o.world));
    const int have = sandbox::visible_gpu_count();
    if (have < o.world)
      throw std::invalid_argument(
          fmt::format("world size {} needs {} GPUs but this machine has {}: lower --world, or run on CPU with "
                      "--device cpu",
                      o.world, o.world, have));
    for (int g : o.gpus)
      if (g < 0 || g >= have) throw std::invalid_argument(fmt::format("--gpus: there is no GPU {} (this machine has {})", g, have));
  }
}

namespace {

// One evaluation's process sets and what they did, kept until the verdict is decided: the ladder's
// lower rungs (the post-run scan, judging the records) read them only when they are reached.
struct evaluation_run {
  const problem& p;
  const eval_options& o;
  std::vector<int> trials;
  seed_source seeds;
  reference_cache cache;
  reference_key key;
  std::unique_ptr<rank_set> ref_set, cand_set;
  std::optional<candidate_stage> cand;
  conduct_outcome run;
  rank_set_ending cand_end, ref_end;

  evaluation_run(const problem& p_, const eval_options& o_)
      : p(p_),
        o(o_),
        seeds(o.secret_seeds ? seed_source::secret() : seed_source::from_base(o.seed, judge_seed_key(cache_base(o)))),
        cache(o.cache_root.empty() ? reference_cache::default_root() : o.cache_root),
        key(reference_key_of(p, o)) {
    for (int t = 0; t < o.trials; ++t) trials.push_back(t);
  }

  // Starts (or takes) the sets, runs every trial and the timing, and ends the sets.
  void run_sets(eval_report& rep, const fs::path& solution, const std::string& code) {
    seed_source secret = seed_source::secret();
    const std::vector<int> missing = seeds.reproducible() ? cache.missing(p, key, trials) : trials;
    rep.reference_cached = missing.empty();
    const bool reference_runs = o.perf || !missing.empty();
    if (!missing.empty() && o.progress && seeds.reproducible())
      o.progress(fmt::format("the reference of {} runs for {} trial(s) (cached afterwards)", p.name(), missing.size()));

    // The sets: warm ones from the run's pool, or started now. The candidate's workspace holds the
    // candidate and the input generator, never the reference; the reference's no candidate file.
    const set_options so = set_options_for(o, code.find("kr_torch") != std::string::npos);
    auto new_set = [&] { return o.pool ? o.pool->take(so) : std::make_unique<rank_set>(make_set_spec(so)); };
    if (o.progress) o.progress(fmt::format("running {} on {} ranks ({})", solution.filename().string(), o.world,
                                      to_string(o.device)));
    if (reference_runs) {
      ref_set = new_set();
      stage_problem(ref_set->workspace(), p, true);
      ref_set->go(set_role::reference, plan_for(set_role::reference, p, o));
    }
    cand_set = new_set();
    cand.emplace(*cand_set, p, solution, code, o);

    conduct_plan plan;
    plan.trials = trials;
    plan.reference_trials = {missing.begin(), missing.end()};
    plan.perf = o.perf;
    plan.timing = o.timing;
    if (o.device == device_kind::cpu)
      plan.timing.warmup_max_ms = std::min(plan.timing.warmup_max_ms, plan.timing.cpu_warmup_max_ms);
    plan.compile_timeout_s = o.compile_timeout_s;
    plan.phase_timeout_s = o.timeout_s;
    plan.sandboxed = o.isolation != sandbox::isolation::none;
    plan.progress = o.progress;
    run = conduct(ref_set.get(), *cand_set, plan, seeds, secret);
    if (run.failure || !run.background.empty()) {
      cand_set->stop();
      if (ref_set) ref_set->stop();
    }
    rep.steps = run.steps;
    cand_end = cand_set->finish();
    if (ref_set) ref_end = ref_set->finish();
    // Replacements start now that this evaluation's ranks are gone: while the agent thinks about the
    // verdict, not while they compete with the evaluation for the cores.
    if (o.pool) top_up(*o.pool, so);
    if (!cand_set->jit_dir().empty()) cand->jit.keep_from(cand->jit_dir);
  }

  // The reference's outputs of the trials it ran go into the cache; then every trial and every
  // checked timing call of every rank is compared, and the timings read.
  const eval_report& judge_records(eval_report& rep) {
    const reference_files refs{cache, key, p, ref_set ? ref_set->workspace() / staged_out : fs::path(),
                               seeds.reproducible()};
    std::map<int, std::vector<std::vector<bool>>> mutated;
    for (const trial_record& t : run.trials) {
      if (!t.mutated) {
        for (int r = 0; r < o.world; ++r) mutated[t.trial].push_back(cache.mutated(p, key, t.trial, r));
        continue;
      }
      mutated[t.trial] = *t.mutated;
      if (refs.cacheable)
        for (int r = 0; r < o.world; ++r)
          cache.store(p, key, t.trial, r, refs.file(t.trial, r, true), t.mutated->at(static_cast<std::size_t>(r)));
    }
    reference_outputs outs;
    outs.live_out = refs.live_out;
    outs.mutated = std::move(mutated);
    outs.file = [&](int trial, int rank) {
      const auto it =
          std::find_if(run.trials.begin(), run.trials.end(), [&](const auto& t) { return t.trial == trial; });
      return refs.file(trial, rank, it != run.trials.end() && it->mutated && !refs.cacheable);
    };
    judge_run(rep, run, outs, cand_set->workspace() / staged_out, o.world,
              judge_rules{p.comparison(), p.in_place_positions()}, o.perf);
    return rep;
  }

  // What the run gives each rung of the ladder below the source scan.
  void add_evidence(verdict_evidence& e, eval_report& rep) {
    e.guard_refusals = cand_end.multicast_refusals;
    e.post_run_multicast = [this] { return scan_what_ran(cand_set->workspace(), cand->jit_dir, cand->ours, o); };
    e.background = run.background;
    if (run.failure)
      e.failure = failed_set{*run.failure, run.failed, run.failed == set_role::reference ? &ref_end : &cand_end};
    e.judge_records = [this, &rep]() -> const eval_report& { return judge_records(rep); };
  }
};

}  // namespace

eval_report evaluate(const problem& p, const fs::path& solution, const eval_options& o) {
  check_options(p, solution, o);
  const auto t0 = std::chrono::steady_clock::now();
  eval_report rep = new_report(p, solution, o);
  verdict_evidence evidence;
  evidence.problem = p.name();
  evidence.perf = o.perf;
  evidence.shared_gpus = o.device == device_kind::cuda;

  // Multicast in the source is refused before anything runs.
  const std::string code = read_file(solution, "solution file");
  if (auto found = scan_multicast_bytes(code, solution.filename().string(), "source"); !found.empty())
    evidence.source_multicast = describe_multicast(found);
  std::optional<evaluation_run> ran;
  if (evidence.source_multicast.empty()) {
    ran.emplace(p, o);
    ran->run_sets(rep, solution, code);
    ran->add_evidence(evidence, rep);
  }

  const ladder_verdict decided = decide_verdict(evidence);
  rep.result = decided.verdict.v;
  rep.reason = decided.verdict.reason;
  rep.message = decided.verdict.message;
  rep.log = decided.verdict.log;
  rep.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace pk::bench
