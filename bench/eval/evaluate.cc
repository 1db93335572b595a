#include "bench/eval/evaluate.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/eval/compare.h"
#include "bench/eval/digest.h"
#include "bench/eval/kr_torch_stage.h"
#include "bench/eval/launch.h"
#include "bench/eval/multicast_scan.h"
#include "bench/eval/reference_cache.h"
#include "bench/eval/roofline.h"
#include "bench/eval/tensor_file.h"
#include "config/paths.h"

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string tail(const std::string& s, std::size_t n = 4000) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A private scratch directory for one run, removed when it goes out of scope (unless kept).
class workspace {
 public:
  explicit workspace(bool keep) : keep_(keep) {
    std::string tmpl = (fs::temp_directory_path() / "pkagent-eval-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch directory in " +
                                                          fs::temp_directory_path().string());
    path_ = tmpl;
  }
  ~workspace() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_;
};

fs::path cache_base(const eval_options& o) {
  return (o.cache_root.empty() ? reference_cache::default_root() : o.cache_root).parent_path();
}

}  // namespace

fs::path multicast_clean_cache(const eval_options& o) { return cache_base(o) / "multicast-scan-clean"; }

namespace {

// Copies what the ranks need into the workspace, so that the sandbox needs no view of the source
// tree (and a problem or worker edited mid-run cannot mix versions).
// Upstream: the checkout's utils/ package (PKB's generator and the helpers its solutions import,
// e.g. utils.cuda_helpers) is staged as upstream/utils, which the worker puts on sys.path.
void stage(const workspace& ws, const problem& p) {
  fs::create_directories(ws.path() / "problem");
  fs::copy_file(p.reference, ws.path() / "problem" / "reference.py");
  if (p.upstream()) {
    const fs::path utils = p.upstream_root / "utils";
    for (const auto& e : fs::recursive_directory_iterator(utils)) {
      if (!e.is_regular_file() || e.path().extension() != ".py") continue;
      const fs::path to = ws.path() / "upstream" / "utils" / fs::relative(e.path(), utils);
      fs::create_directories(to.parent_path());
      fs::copy_file(e.path(), to);
    }
  } else {
    fs::copy_file(p.inputs, ws.path() / "problem" / "inputs.py");
  }
  fs::create_directories(ws.path() / "worker");
  for (const char* f : {"rank_worker.py", "tensor_file.py", "timing.py"})
    fs::copy_file(config::data_path("bench/worker") / f, ws.path() / "worker" / f);
  fs::create_directories(ws.path() / "out");
}

json plan_json(const problem& p, const eval_options& o, const std::string& mode, const std::vector<int>& trials,
               bool perf) {
  json shape = json::object();
  for (const auto& [k, v] : p.shape) shape[k] = v;
  json plan = {{"mode", mode},
               {"device", o.device},
               {"problem",
                {{"id", p.id}, {"reference", "problem/reference.py"},
                 {"inputs", p.upstream() ? json(nullptr) : json("problem/inputs.py")},
                 {"pkb_root", p.upstream() ? json("upstream") : json(nullptr)},
                 {"shape", shape}, {"dtype", p.dtype}}},
               {"seed", o.seed},
               {"trials", trials},
               {"out_dir", "out"},
               {"perf", nullptr}};
  if (perf) {
    const auto& t = o.timing;
    plan["perf"] = {{"warmup_min_calls", t.warmup_min_calls}, {"warmup_min_ms", t.warmup_min_ms},
                    {"warmup_max_ms", t.warmup_max_ms},       {"min_calls", t.min_calls},
                    {"min_ms", t.min_ms},                     {"max_calls", t.max_calls},
                    {"cuda_graph", t.cuda_graph}};
  }
  return plan;
}

std::vector<int> gpus_for(const eval_options& o) {
  if (o.device != "cuda") return {};
  if (!o.gpus.empty()) return o.gpus;
  std::vector<int> g;
  for (int i = 0; i < o.world; ++i) g.push_back(i);
  return g;
}

// ext_cache: the candidate's JIT cache (a candidate run; the reference run has none). prebuild_kr:
// the candidate names kr_torch, so its extension is built beforehand (CUDA only).
launch_outcome run_ranks(const workspace& ws, const eval_options& o, const json& plan,
                         const std::optional<fs::path>& ext_cache, bool prebuild_kr = false) {
  launch_request req;
  req.workspace = ws.path();
  req.gpus = gpus_for(o);
  req.isolation = o.isolation;
  json p = plan;
  if (ext_cache) {
    fs::create_directories(*ext_cache);
    if (o.isolation == sandbox::isolation::none) {
      p["torch_extensions_dir"] = ext_cache->string();
    } else {
      fs::create_directories(ws.path() / "ext");
      req.binds.push_back({*ext_cache, "/workspace/ext", true});
      p["torch_extensions_dir"] = "ext";
    }
  }
  if (ext_cache) {
    kr_torch_offer kr = offer_kr_torch(ws.path(), o.isolation != sandbox::isolation::none, cache_base(o),
                                       prebuild_kr && o.device == "cuda", o.progress);
    if (!kr.note.empty() && o.progress) o.progress(kr.note);
    req.binds.insert(req.binds.end(), kr.binds.begin(), kr.binds.end());
    p["python_path"] = kr.python_path;
    p["env"] = kr.env;
  }
  std::ofstream(ws.path() / "plan.json") << p.dump(2);
  req.spec.python = config::python();
  req.spec.worker = "worker/rank_worker.py";
  req.spec.plan = "plan.json";
  req.spec.out_dir = "out";
  req.spec.world = o.world;
  req.spec.device = o.device;
  req.spec.import_timeout_s = o.compile_timeout_s;
  req.spec.phase_timeout_s = o.timeout_s;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  req.spec.threads_per_rank = static_cast<int>(std::max(1u, cores / static_cast<unsigned>(o.world)));
  return launch(req);
}

// Turns a failed run into a verdict and message; nullopt when every rank finished its work.
struct failure_verdict {
  verdict v;
  std::string message;
  std::string log;
};

std::optional<failure_verdict> classify(const launch_outcome& out) {
  auto error_of = [](const rank_outcome& r) -> const json* {
    if (!r.result) return nullptr;
    auto it = r.result->find("error");
    return it != r.result->end() && it->is_object() ? &*it : nullptr;
  };
  const json& f = out.failure;
  if (!f.is_null() && f.value("kind", "") == "timeout") {
    std::string where;
    for (const auto& r : out.ranks) where += fmt::format("{}rank {} in '{}'", where.empty() ? "" : ", ", r.rank, r.phase);
    const int rank = f.value("rank", 0);
    return failure_verdict{verdict::timeout,
                           fmt::format("rank {} spent more than {:g} s in phase '{}' (a hung collective or an endless "
                                       "loop); all ranks were killed ({})",
                                       rank, f.value("limit_s", 0.0), f.value("phase", "?"), where),
                           tail(out.ranks.at(static_cast<std::size_t>(rank)).stderr_text)};
  }
  // The failing rank: the supervisor's first, else any without a finished result.
  const rank_outcome* bad = nullptr;
  if (!f.is_null()) bad = &out.ranks.at(f.value("rank", 0));
  for (const auto& r : out.ranks)
    if (!bad && (!r.result || !r.result->value("ok", false))) bad = &r;
  if (!bad) return std::nullopt;

  const std::string log = tail(bad->stderr_text + bad->stdout_text);
  if (const json* err = error_of(*bad)) {
    const std::string kind = err->value("kind", "");
    const std::string msg = err->value("message", "");
    const std::string phase = err->value("phase", "");
    if (kind == "import_error" || kind == "no_solution")
      return failure_verdict{verdict::compile_error, fmt::format("rank {}: {}", bad->rank, tail(msg, 6000)), ""};
    if (kind == "harness_error")
      return failure_verdict{verdict::runtime_error,
                             fmt::format("rank {} failed in the evaluator's own code during '{}' (the candidate may "
                                         "have broken torch or the process state): {}",
                                         bad->rank, phase, tail(msg, 6000)),
                             log};
    return failure_verdict{verdict::runtime_error, fmt::format("rank {}: {}", bad->rank, tail(msg, 6000)), log};
  }
  const bool early = bad->phase == "start" || bad->phase == "import";
  const std::string how = bad->signal ? fmt::format("was killed by signal {}", bad->signal)
                                      : fmt::format("exited with code {}", bad->exit_code);
  if (bad->exit_code == 0 && !bad->signal)
    return failure_verdict{verdict::runtime_error,
                           fmt::format("rank {} exited during phase '{}' without finishing (did the candidate call "
                                       "exit() or sys.exit()?)",
                                       bad->rank, bad->phase),
                           log};
  return failure_verdict{early ? verdict::compile_error : verdict::runtime_error,
                         fmt::format("rank {} {} during phase '{}' without reporting an error (a crash in native "
                                     "code?); see its output below",
                                     bad->rank, how, bad->phase),
                         log};
}

// Every regular file under `dir` (what pkagent itself put there, before a run).
std::set<fs::path> files_under(const fs::path& dir) {
  std::set<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.insert(e.path());
  return files;
}

// Fills the reference cache for the trials it lacks, with one reference run.
bool ensure_reference(const problem& p, const eval_options& o, const reference_cache& cache, const reference_key& key,
                      const std::vector<int>& trials) {
  const std::vector<int> missing = cache.missing(p, key, trials);
  if (missing.empty()) return true;
  if (o.progress)
    o.progress(fmt::format("running the reference of {} for {} trial(s) (cached afterwards)", p.name(), missing.size()));
  workspace ws(o.keep_workspace);
  stage(ws, p);
  eval_options ro = o;
  const launch_outcome out = run_ranks(ws, ro, plan_json(p, o, "reference", missing, false), std::nullopt);
  if (auto f = classify(out))
    throw evaluation_error(fmt::format("the reference of problem {} failed ({}): {}\n{}", p.name(), to_string(f->v),
                                       f->message, f->log));
  for (const auto& r : out.ranks)
    for (const json& t : r.result->at("trials")) {
      const int trial = t.at("trial");
      cache.store(p, key, trial, r.rank, ws.path() / "out" / fmt::format("rank{}", r.rank) / t.at("file").get<std::string>(),
                  t.at("mutated").get<std::vector<bool>>());
    }
  return false;
}

// Maximum over ranks of each call's time: all ranks made the same calls in the same order.
std::optional<std::vector<double>> max_over_ranks(const launch_outcome& out, std::size_t trial_index, const char* key) {
  std::vector<double> m;
  for (const auto& r : out.ranks) {
    const json& t = r.result->at("trials").at(trial_index);
    if (!t.contains(key)) return std::nullopt;
    const auto v = t.at(key).get<std::vector<double>>();
    if (m.empty()) m.assign(v.size(), 0.0);
    if (v.size() != m.size()) return std::nullopt;
    for (std::size_t i = 0; i < v.size(); ++i) m[i] = std::max(m[i], v[i]);
  }
  return m;
}

}  // namespace

int visible_gpu_count() {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++n;
  }
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && n > 0) {
    const std::string s = v;
    if (s.empty()) return 0;
    const int listed = static_cast<int>(std::count(s.begin(), s.end(), ',')) + 1;
    n = std::min(n, listed);
  }
  return n;
}

void check_options(const problem& p, const fs::path& solution, const eval_options& o) {
  if (!p.supports_world(o.world)) {
    std::string sizes;
    for (int w : p.world_sizes) sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", w);
    throw std::invalid_argument(fmt::format("problem {} does not support world size {}: use --world with one of {}",
                                            p.name(), o.world, sizes));
  }
  if (o.device != "cuda" && o.device != "cpu")
    throw std::invalid_argument(fmt::format("unknown device '{}': use --device cuda or --device cpu", o.device));
  if (o.trials < 1) throw std::invalid_argument("--trials must be at least 1");
  if (!fs::exists(solution))
    throw std::invalid_argument(fmt::format("solution file {} does not exist", solution.string()));
  if (!fs::is_regular_file(solution) || ::access(solution.c_str(), R_OK) != 0)
    throw std::invalid_argument(fmt::format("solution file {} is not a readable file", solution.string()));
  if (o.device == "cuda") {
    if (!o.gpus.empty() && static_cast<int>(o.gpus.size()) != o.world)
      throw std::invalid_argument(fmt::format("--gpus names {} GPUs but --world is {}: name one GPU per rank",
                                              o.gpus.size(), o.world));
    const int have = visible_gpu_count();
    if (have < o.world)
      throw std::invalid_argument(
          fmt::format("world size {} needs {} GPUs but this machine has {}: lower --world, or run on CPU with "
                      "--device cpu",
                      o.world, o.world, have));
    for (int g : o.gpus)
      if (g < 0 || g >= have) throw std::invalid_argument(fmt::format("--gpus: there is no GPU {} (this machine has {})", g, have));
  }
}

eval_report evaluate(const problem& p, const fs::path& solution, const eval_options& o) {
  check_options(p, solution, o);
  const auto t0 = std::chrono::steady_clock::now();
  eval_report rep;
  rep.problem = p.name();
  rep.upstream = p.upstream_root.string();
  rep.solution = solution.string();
  rep.world = o.world;
  rep.device = o.device;
  rep.dtype = p.dtype;
  rep.trials_requested = o.trials;
  rep.sandbox = o.isolation == sandbox::isolation::none ? "none" : "bwrap";
  if (o.hardware) {
    const roofline_bound b = roofline(p, o.world, *o.hardware);
    rep.roofline_ms = b.seconds() * 1e3;
    rep.roofline_limiter = b.limiter();
  }

  std::vector<int> trials;
  for (int t = 0; t < o.trials; ++t) trials.push_back(t);
  const reference_cache cache(o.cache_root.empty() ? reference_cache::default_root() : o.cache_root);
  const reference_key key{o.world, o.device, p.dtype, o.seed};
  auto finish = [&]() {
    rep.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  };
  // Multicast in the source is refused before anything runs (the reference run included).
  const std::string code = read_file(solution);
  if (auto found = scan_multicast_bytes(code, solution.filename().string(), "source"); !found.empty()) {
    rep.result = verdict::forbidden;
    rep.message = "refused before running. " + describe_multicast(found);
    return finish();
  }
  rep.reference_cached = ensure_reference(p, o, cache, key, trials);

  // The candidate's run: every trial, then (optionally) timing against the reference.
  if (o.progress) o.progress(fmt::format("running {} on {} ranks ({})", solution.filename().string(), o.world, o.device));
  workspace ws(o.keep_workspace);
  if (o.keep_workspace && o.progress) o.progress("workspace kept at " + ws.path().string());
  stage(ws, p);
  fs::create_directories(ws.path() / "candidate");
  const fs::path cand = fs::path("candidate") / solution.filename();
  fs::copy_file(solution, ws.path() / cand);
  json plan = plan_json(p, o, "candidate", trials, o.perf);
  plan["candidate"] = cand.string();
  // JIT builds are cached per candidate content and per rank (the worker appends rank<r>).
  const fs::path ext_cache = cache_base(o) / "torch-extensions" / digest().add(code).hex();
  const std::set<fs::path> ours = files_under(ws.path());
  // Only a candidate that names kr_torch waits for its extension's (one-time) build.
  const launch_outcome out = run_ranks(ws, o, plan, ext_cache, code.find("kr_torch") != std::string::npos);

  // Whatever the run left (JIT builds, Triton's cache, files written to the workspace) is scanned
  // for multicast before any other verdict: it overrides them all.
  {
    std::set<fs::path> skip = ours;
    for (const char* f : {"plan.json", "launch.json", "ranks.json"}) skip.insert(ws.path() / f);
    multicast_scan_options so;
    so.clean_cache = multicast_clean_cache(o);
    const auto found = scan_multicast_tree({{ext_cache, "JIT build directory"}, {ws.path(), "workspace"}}, skip, so);
    if (!found.empty()) {
      rep.result = verdict::forbidden;
      rep.message = "found in what the candidate's run produced. " + describe_multicast(found);
      return finish();
    }
  }
  if (auto f = classify(out)) {
    rep.result = f->v;
    rep.message = f->message;
    rep.log = f->log;
    return finish();
  }

  // Correctness: each trial, each rank, against the cached reference files. Only C++ reads them.
  bool all_ok = true;
  std::vector<double> ref_all, cand_all;
  for (std::size_t ti = 0; ti < trials.size(); ++ti) {
    trial_report tr;
    tr.trial = trials[ti];
    for (const auto& r : out.ranks) {
      rank_check rc;
      rc.rank = r.rank;
      try {
        const json& entry = r.result->at("trials").at(ti);
        if (entry.at("trial").get<int>() != tr.trial) throw std::runtime_error("trials recorded out of order");
        const tensor_file got = tensor_file::read(ws.path() / "out" / fmt::format("rank{}", r.rank) /
                                                  fmt::format("trial{}.st", tr.trial));
        const tensor_file want = tensor_file::read(cache.output_file(p, key, tr.trial, r.rank));
        comparison c = compare_outputs(got.tree("output"), got, want.tree("output"), want, {p.atol, p.rtol});
        if (c.ok)
          c = compare_unchanged_inputs(got.tree("inputs"), got, want.tree("inputs"), want,
                                       cache.mutated(p, key, tr.trial, r.rank));
        rc.ok = c.ok;
        rc.message = c.first_failure();
        for (const auto& leaf : c.leaves) {
          rc.max_abs_error = std::max(rc.max_abs_error, leaf.max_abs_error);
          rc.max_rel_error = std::max(rc.max_rel_error, leaf.max_rel_error);
          rc.mismatches += leaf.mismatches;
        }
      } catch (const std::exception& e) {
        // A malformed or missing result file is the candidate's process's doing.
        rc.ok = false;
        rc.message = fmt::format("its recorded result cannot be read: {}", e.what());
      }
      tr.correct = tr.correct && rc.ok;
      tr.ranks.push_back(std::move(rc));
    }
    if (tr.correct && o.perf) {
      auto ref = max_over_ranks(out, ti, "reference_ms");
      auto cnd = max_over_ranks(out, ti, "candidate_ms");
      if (ref && cnd && !ref->empty() && ref->size() == cnd->size()) {
        tr.reference = stats_of(*ref);
        tr.candidate = stats_of(*cnd);
        if (tr.candidate->median_ms > 0) tr.speedup = tr.reference->median_ms / tr.candidate->median_ms;
        ref_all.insert(ref_all.end(), ref->begin(), ref->end());
        cand_all.insert(cand_all.end(), cnd->begin(), cnd->end());
      }
    }
    all_ok = all_ok && tr.correct;
    rep.trials.push_back(std::move(tr));
  }
  if (!all_ok) {
    rep.result = verdict::mismatch;
    for (const auto& t : rep.trials)
      for (const auto& c : t.ranks)
        if (!c.ok && rep.message.empty()) rep.message = fmt::format("trial {}, rank {}: {}", t.trial, c.rank, c.message);
    return finish();
  }
  rep.result = verdict::correct;
  if (o.perf && !cand_all.empty()) {
    rep.reference = stats_of(ref_all);
    rep.candidate = stats_of(cand_all);
    if (rep.candidate->median_ms > 0) rep.speedup = rep.reference->median_ms / rep.candidate->median_ms;
  } else if (o.perf) {
    rep.message = "timings missing from the ranks' results";
  }
  return finish();
}

}  // namespace pk::bench
