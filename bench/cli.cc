#include "bench/cli.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench/device_option.h"
#include "bench/eval/evaluate.h"
#include "bench/eval/multicast_scan.h"
#include "bench/eval/sets/rank_supervisor.h"
#include "bench/qa/problems_check.h"
#include "bench/suite/hardware_spec.h"
#include "bench/suite/machine.h"
#include "bench/suite/problem.h"
#include "bench/suite/roofline.h"
#include "bench/suite/suite.h"
#include "sandbox/cli.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

std::string micros(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  return fmt::format("{:.3f} ms", seconds * 1e3);
}

struct problems_args {
  std::string suite_dir;
  std::string hardware;
  bool json = false;
  problems_check check;  // --check: world is also the bound's
};

int run_problems(const problems_args& a) {
  const auto suite = load_suite(a.suite_dir.empty() ? default_suite_dir() : fs::path(a.suite_dir));
  if (!a.check.problems.empty()) return run_problems_check(a.check, a.json, suite);
  const hardware_spec hw = load_hardware_spec(a.hardware.empty() ? default_hardware_spec() : fs::path(a.hardware));
  nlohmann::json out = nlohmann::json::array();
  std::size_t stem_width = 26;
  for (const problem& p : suite) stem_width = std::max(stem_width, p.stem.size());
  if (!a.json)
    fmt::print("{:>4}  {:<{}} {:<18} {:<10} {:>11}  {:<6} {}\n", "id", "stem", stem_width, "category", "worlds",
               fmt::format("bound@W={}", a.check.o.world), "limit", "title");
  bool any_degenerate = false;
  for (const problem& p : suite) {
    std::string worlds = p.upstream() ? "any" : "";
    for (int w : p.world_sizes)
      worlds += fmt::format("{}{}{}", worlds.empty() ? "" : ",", w, p.degenerate_at(w) ? "*" : "");
    any_degenerate = any_degenerate || !p.degenerate_worlds.empty() || p.degenerate_at(1);
    if (p.upstream()) {  // no roofline model for PKB's own files
      if (a.json)
        out.push_back({{"id", p.id}, {"stem", p.stem}, {"category", p.category}, {"title", p.title},
                       {"world_sizes", "any"}, {"dtype", p.dtype}, {"reference", p.reference.string()},
                       {"roofline", nullptr}});
      else
        fmt::print("{:>4}  {:<{}} {:<18} {:<10} {:>11}  {:<6} {}\n", p.id, p.stem, stem_width, p.category, worlds,
                   "-", "-", p.title);
      continue;
    }
    // A problem not defined at the asked world has no bound there (its formulas may not hold, e.g.
    // W/2 - 1 < 0 at W = 1): the listing says so instead of refusing the whole suite.
    if (!p.supports_world(a.check.o.world)) {
      if (a.json)
        out.push_back({{"id", p.id}, {"stem", p.stem}, {"category", p.category}, {"title", p.title},
                       {"world_sizes", p.world_sizes}, {"dtype", p.dtype}, {"roofline", nullptr}});
      else
        fmt::print("{:>4}  {:<{}} {:<18} {:<10} {:>11}  {:<6} {}\n", p.id, p.stem, stem_width, p.category, worlds,
                   "-", fmt::format("no W={}", a.check.o.world), p.title);
      continue;
    }
    const roofline_bound b = roofline(p, a.check.o.world, hw);
    if (a.json) {
      out.push_back({{"id", p.id}, {"stem", p.stem}, {"category", p.category}, {"title", p.title},
                     {"world_sizes", p.world_sizes}, {"dtype", p.dtype},
                     {"degenerate", p.degenerate_worlds.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json{{"worlds", p.degenerate_worlds},
                                                                                 {"why", p.degenerate_why}}},
                     {"roofline", {{"world", a.check.o.world}, {"seconds", b.seconds()}, {"limiter", b.limiter()},
                                   {"link_bytes", b.link_bytes}, {"hbm_bytes", b.hbm_bytes}, {"flops", b.flops}}}});
    } else {
      fmt::print("{:>4}  {:<{}} {:<18} {:<10} {:>11}  {:<6} {}\n", p.id, p.stem, stem_width, p.category, worlds,
                 micros(b.seconds()), b.limiter(), p.title);
    }
  }
  if (a.json) fmt::print("{}\n", out.dump(2));
  else if (!suite.empty() && suite.front().upstream())
    fmt::print("{} problems of the ParallelKernelBench checkout {} (upstream mode: PKB's inputs, bf16, M=N=1024, "
               "atol=rtol=1e-2)\n",
               suite.size(), suite.front().upstream_root.string());
  else fmt::print("{} problems; bound = max(link bytes / link_bw, HBM bytes / hbm_bw, FLOPs / peak) on {}\n",
                  suite.size(), hw.name);
  if (!a.json && any_degenerate) {
    fmt::print("* a degenerate world size: the problem's communication pattern does not occur there\n");
    const auto one_rank =
        std::find_if(suite.begin(), suite.end(), [](const problem& p) { return p.degenerate_at(1); });
    if (one_rank != suite.end()) fmt::print("  W = 1, wherever listed: {}\n", one_rank->degenerate_why_at(1));
    for (const problem& p : suite)
      if (!p.degenerate_worlds.empty())
        fmt::print("  {}: W = {}: {}\n", p.name(), fmt::join(p.degenerate_worlds, ", "), p.degenerate_why);
  }
  return 0;
}

// The judge's flags, bound straight into eval_options, plus those of the command line only.
struct eval_args {
  eval_options o;
  std::string problem, suite_dir, hardware;
  std::vector<std::string> solutions;
  int repeat = 1;
  double pause_s = 0;
  bool json = false, quiet = false;
};

int run_eval(eval_args& a) {
  eval_options& o = a.o;
  if (o.isolation == sandbox::isolation::none)
    fmt::print(stderr, "pkagent eval: warning: --sandbox none: the candidate runs unisolated, with your "
                       "files and network in reach; use it only for code you trust\n");
  if (o.timing.min_calls > o.timing.max_calls)
    throw std::invalid_argument(fmt::format("--min-calls {} is above --max-calls {}: raise --max-calls",
                                            o.timing.min_calls, o.timing.max_calls));
  if (!a.quiet) o.progress = [](const std::string& line) { fmt::print(stderr, "pkagent eval: {}\n", line); };

  const auto suite = load_suite(a.suite_dir.empty() ? default_suite_dir() : fs::path(a.suite_dir));
  const problem& p = find_problem(suite, a.problem);
  if (a.hardware.empty()) {
    // The bound of the machine the ranks run on, never another's: the spec matching its GPUs, or none.
    std::vector<int> gpus = o.gpus;
    if (gpus.empty())
      for (int i = 0; i < o.world; ++i) gpus.push_back(i);  // --gpus' default
    const machine m = detect_machine(o.device, o.world, gpus);
    o.hardware = m.spec;
    o.no_hardware = m.missing_spec();
  } else {
    o.hardware = load_hardware_spec(a.hardware);
  }
  if (p.upstream() && o.progress)
    o.progress(fmt::format("upstream mode: {} with the input generator of the ParallelKernelBench checkout {} "
                           "(it seeds from problem id, rank and trial; --seed is not used)",
                           p.reference.string(), p.upstream_root.string()));
  // More than one evaluation: each takes ranks that were started (and imported torch) while the one
  // before it was judged.
  const std::size_t total = a.solutions.size() * static_cast<std::size_t>(a.repeat);
  for (const std::string& solution : a.solutions) check_options(p, solution, o);  // all, before the first runs
  std::optional<warm_pool> pool;
  if (total > 1) o.pool = &pool.emplace();
  bool all_correct = true;
  nlohmann::json reports = nlohmann::json::array();
  auto print_reports = [&] {
    const nlohmann::json& out = total == 1 ? reports.front() : reports;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  };
  std::size_t done = 0;
  for (const std::string& solution : a.solutions) {
    for (int k = 0; k < a.repeat; ++k) {
      if (done++ > 0 && a.pause_s > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(a.pause_s));
      eval_report r;
      try {
        r = evaluate(p, solution, o);
      } catch (...) {
        // The evaluator failed (exit 3): what it judged before is printed all the same.
        if (a.json && !reports.empty()) print_reports();
        throw;
      }
      all_correct = all_correct && r.ok();
      if (a.json) {
        reports.push_back(to_json(r));
      } else {
        if (total > 1) fmt::print("== {}{} ==\n", solution, a.repeat > 1 ? fmt::format(" ({}/{})", k + 1, a.repeat) : "");
        fmt::print("{}", render_text(r));
        std::fflush(stdout);
      }
    }
  }
  if (a.json) print_reports();
  return all_correct ? 0 : 1;
}

struct scan_args {
  std::vector<std::string> paths;
  bool json = false, no_disassembly = false;
};

int run_scan(const scan_args& a) {
  std::vector<scan_root> roots;
  for (const std::string& p : a.paths) {
    if (!fs::exists(p)) throw std::invalid_argument(fmt::format("{}: no such file or directory", p));
    roots.push_back({p, p});
  }
  multicast_scan_options o;
  o.disassemble = !a.no_disassembly;
  const auto found = scan_multicast_tree(roots, {}, o);
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : found)
      out.push_back({{"file", f.file}, {"what", f.what}, {"match", f.match}, {"where", f.where}, {"line", f.line}});
    fmt::print("{}\n", out.dump(2));
  } else if (!found.empty()) {
    fmt::print(stderr, "{}\n", describe_multicast(found));
  }
  return found.empty() ? 0 : 1;
}

}  // namespace

void add_bench_commands(CLI::App& app, int& exit_code) {
  auto pa = std::make_shared<problems_args>();
  CLI::App* problems = app.add_subcommand("problems", "List the problems of the suite with their roofline bound");
  problems->add_option("--suite-dir", pa->suite_dir,
                       "A directory of problems (default: bench/problems), or a ParallelKernelBench checkout");
  problems->add_option("--hardware", pa->hardware, "Hardware spec TOML (default: config/hardware/h200x2.toml)");
  problems->add_option("--world", pa->check.o.world, "World size for the bound")->check(CLI::PositiveNumber);
  problems->add_flag("--json", pa->json, "Print JSON");
  problems->add_option("--check", pa->check.problems,
                       "Discrimination check of problem IDs (comma-separated) or all: the reference must be correct "
                       "as its own candidate and generated wrong candidates must not be (exit 0 when so)");
  add_device_option(*problems, pa->check.o.device, "--check: cuda (NCCL) or cpu (gloo)");
  problems->add_flag("--small", pa->check.small, "--check: run at each problem's [small_shape]");
  problems->add_option("--trials", pa->check.o.trials, "--check: trials per candidate")->capture_default_str()
      ->check(CLI::PositiveNumber);
  problems->add_option("--seed", pa->check.o.seed, "--check: base seed of the inputs")->capture_default_str();
  problems->add_option("--timeout", pa->check.o.timeout_s, "--check: seconds allowed per phase")->capture_default_str()
      ->check(CLI::PositiveNumber);
  sandbox::add_isolation_option(*problems, pa->check.o.isolation, "--check: bwrap (default) or none");
  problems->callback([pa, &exit_code] { exit_code = run_problems(*pa); });

  auto ea = std::make_shared<eval_args>();
  CLI::App* eval = app.add_subcommand(
      "eval", "Judge a candidate solution of a problem: correctness on fresh inputs per trial, then timing against "
              "the reference (exit 0 only when correct)");
  eval->footer("A single evaluation starts its ranks cold: Python and torch start in every rank before any work "
               "(seconds on a GPU host). Ranks can only be warm in a pkagent that lives across evaluations: with "
               "several --solution files or --repeat, each evaluation takes ranks started while the one before "
               "was judged, and `pkagent run` keeps such a pool for its pkb commands and final scorings.");
  eval->add_option("--problem", ea->problem, "Problem id, stem or <id>_<stem>")->required();
  eval->add_option("--solution", ea->solutions,
                   "The candidate: a Python file defining solution(...); repeat the flag to judge several in turn "
                   "(--json then prints an array)")
      ->required();
  eval->add_option("--repeat", ea->repeat, "Judge each solution this many times (start-up and leak benchmarks)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  eval->add_option("--pause", ea->pause_s, "Seconds between evaluations of a series (as an agent's thinking leaves "
                                           "the warm ranks time to get ready)")
      ->check(CLI::NonNegativeNumber);
  eval_options& o = ea->o;
  eval->add_option("--world", o.world, "Number of ranks (one GPU each)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  eval->add_option("--trials", o.trials, "Trials, each with fresh inputs")->capture_default_str()
      ->check(CLI::PositiveNumber);
  eval->add_flag_callback("--no-perf", [&o] { o.perf = false; }, "Check correctness only; no timing");
  add_device_option(*eval, o.device, "cuda (NCCL, one GPU per rank) or cpu (gloo)");
  eval->add_flag("--json", ea->json, "Print the report as JSON");
  sandbox::add_isolation_option(*eval, o.isolation, "bwrap (default) or none (unisolated: trusted code only)");
  eval->add_option("--timeout", o.timeout_s, "Seconds allowed per phase (each trial, each timing)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  eval->add_option("--compile-timeout", o.compile_timeout_s, "Seconds allowed for imports and JIT compilation")
      ->capture_default_str()->check(CLI::PositiveNumber);
  eval->add_option("--seed", o.seed, "Base seed of the inputs (final scoring uses one the agent never saw)")
      ->capture_default_str();
  eval->add_option("--gpus", o.gpus, "Host GPU indices to use, one per rank (default 0..world-1)")->delimiter(',');
  eval->add_flag("--cuda-graph", o.timing.cuda_graph, "Time CUDA-graph replays (for launch-bound solutions)");
  eval->add_option("--min-calls", o.timing.min_calls, "Timed calls per function and trial, at least")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  eval->add_option("--max-calls", o.timing.max_calls, "Timed calls per function and trial, at most")
      ->capture_default_str()->check(CLI::Range(10, 100000));
  eval->add_option("--suite-dir", ea->suite_dir,
                   "A directory of problems in our format (default: bench/problems), or a ParallelKernelBench "
                   "checkout: upstream mode, judging its reference/<id>_<stem>.py on inputs from its own generator");
  eval->add_option("--hardware", ea->hardware,
                   "Hardware spec for the roofline line (default: the one of config/hardware matching the GPUs used)");
  eval->add_flag("--keep-workspace", o.keep_workspace, "Keep the run's scratch directory (printed) for debugging");
  eval->add_flag("-q,--quiet", ea->quiet, "No progress lines on stderr");
  eval->callback([ea, &exit_code] { exit_code = run_eval(*ea); });

  auto sa = std::make_shared<scan_args>();
  CLI::App* scan = app.add_subcommand(
      "scan-multicast", "Look for NVLink multicast (cuMulticast*, multimem.*, NVLS switched on) in sources and "
                        "binaries, as the judge does (exit 0 clean, 1 found, 2 bad input)");
  scan->add_option("paths", sa->paths, "Files or directories (sources, .so, .o, .cubin, .ptx)")->required();
  scan->add_flag("--json", sa->json, "Print the findings as JSON");
  scan->add_flag("--no-disassembly", sa->no_disassembly, "Do not run cuobjdump on CUDA binaries");
  scan->callback([sa, &exit_code] { exit_code = run_scan(*sa); });

  auto ws = std::make_shared<std::string>();
  CLI::App* ranks = app.add_subcommand(ranks_subcommand, "");  // internal: started by `eval` in its sandbox
  ranks->group("");
  ranks->add_option("workspace", *ws)->required();
  ranks->callback([ws, &exit_code] { exit_code = supervise_ranks(*ws); });
}

}  // namespace pk::bench
