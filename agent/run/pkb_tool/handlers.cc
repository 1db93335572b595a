#include "agent/run/pkb_tool/handlers.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "agent/run/pkb_tool/compiler_output.h"
#include "agent/run/pkb_tool/profile.h"
#include "bench/eval/eval_report.h"
#include "bench/eval/multicast_scan.h"
#include "config/paths.h"
#include "config/read_file.h"
#include "sandbox/gpu_guard.h"
#include "sandbox/sandbox.h"

namespace pk::pkb {
namespace fs = std::filesystem;

namespace {

// Where `pkb profile` shows pkagent inside the sandbox (it runs pkagent eval under ncu).
constexpr std::string_view profile_bin_inside = "/run/pkb-profile/pkagent";

// The evaluator's options for this request: the base ones with the lease's GPUs.
bench::eval_options eval_options_for(const context& ctx, const request& req) {
  bench::eval_options o = ctx.eval;
  o.progress = nullptr;
  if (ctx.cuda()) o.gpus = req.gpus;
  return o;
}

// ---- check, bench, submit ----

// The judge's report, with the failing rank's log shaped rather than shown raw.
std::string describe(bench::eval_report r, const tool_texts& texts) {
  std::string log = std::move(r.log);
  r.log.clear();
  std::string out = bench::render_text(r);
  if (!log.empty()) out += texts.failing_rank.render({}) + shape_compiler_output(log);
  return out;
}

enum class evaluation { check, bench, submit };

reply evaluate_solution(const context& ctx, request& req, evaluation kind) {
  bench::eval_options o = eval_options_for(ctx, req);
  o.seed = ctx.check_seed;
  o.perf = kind == evaluation::bench;
  o.trials = kind == evaluation::bench ? 1 : ctx.check_trials;
  // The file as it was judged, read before the judge runs: the episode page diffs successive checks.
  const auto judged = try_read_file(ctx.workspace / "solution.py");
  const bench::eval_report rep = bench::evaluate(ctx.problem, ctx.workspace / "solution.py", o);
  req.log["solution"] = judged ? nlohmann::json(*judged) : nlohmann::json();
  req.log["report"] = bench::to_json(rep);
  reply r{rep.ok() ? 0 : 1, describe(rep, *ctx.texts)};
  if (kind == evaluation::submit) r.output += ctx.texts->submit_verdict.render({{"ready", rep.ok() ? "1" : ""}});
  req.log["verdict"] = bench::to_string(rep.result);
  return r;
}

// ---- run, profile: a command in a fresh sandbox ----

// What a command would run with: the workspace's files, less unchanged copies of the task's own
// (whose docs name the forbidden instructions). Code generated while the command runs escapes
// this; the evaluator's scans after each run (check, bench, final scoring) still see its output.
std::vector<bench::multicast_finding> scan_workspace(const fs::path& workspace, const fs::path& task_dir,
                                                     const fs::path& clean_cache) {
  std::set<fs::path> skip;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(workspace, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || task_dir.empty()) continue;
    const fs::path original = task_dir / fs::relative(it->path(), workspace);
    if (!fs::is_regular_file(original, ec) || fs::file_size(original, ec) != it->file_size(ec)) continue;
    if (const auto bytes = try_read_file(original); bytes && bytes == try_read_file(it->path()))
      skip.insert(it->path());
  }
  bench::multicast_scan_options so;
  so.clean_cache = clean_cache;
  return bench::scan_multicast_tree({{workspace, "workspace"}}, skip, so);
}

// The refusal when the workspace holds multicast code, before anything runs.
std::optional<reply> refuse_multicast(const context& ctx, request& req) {
  const fs::path clean = bench::multicast_clean_cache(eval_options_for(ctx, req));
  fs::create_directories(clean);
  const auto found = scan_workspace(ctx.workspace, ctx.task_dir, clean);
  if (found.empty()) return std::nullopt;
  req.log["refused"] = "multicast";
  return reply{1, ctx.texts->multicast_refused.render(
                      {{"command", req.name}, {"findings", bench::describe_multicast(found)}})};
}

// The base sandbox of `pkb run` with the workspace, the lease's GPUs and the command timeout.
sandbox::spec sandbox_for(const context& ctx, const request& req) {
  sandbox::spec s = ctx.run_sandbox;
  s.workspace = ctx.workspace;
  if (ctx.cuda()) s.gpus = req.gpus;
  s.limits.wall = std::chrono::milliseconds(static_cast<long long>(ctx.command_timeout_s * 1000));
  return s;
}

// Runs `words` under `s`: one word is a shell line as written (pipes, &&); several are exec'd as
// an argv with no shell, so `pkb run -- sh -c "exit 7"` means what it says. Returns the exit status,
// and stdout then stderr (with a note on a timeout).
reply run_sandboxed(const context& ctx, const request& req, const sandbox::spec& s,
                    const std::vector<std::string>& words) {
  const sandbox::result ran = words.size() == 1 ? sandbox::run(s, words.front()) : sandbox::run_argv(s, words);
  std::string text = ran.out.text;
  if (!ran.err.text.empty()) text += (text.empty() || text.back() == '\n' ? "" : "\n") + ran.err.text;
  if (ran.timed_out)
    text += "\n" + ctx.texts->timed_out.render(
                       {{"command", req.name}, {"seconds", fmt::format("{:.0f}", ctx.command_timeout_s)}});
  return {ran.shell_status(), text};
}

std::optional<fs::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> dirs;
  while (true) {
    const auto colon = rest.find(':');
    dirs.emplace_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    fs::path candidate = fs::path(d) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

reply check_solution(const context& ctx, request& req) { return evaluate_solution(ctx, req, evaluation::check); }
reply bench_solution(const context& ctx, request& req) { return evaluate_solution(ctx, req, evaluation::bench); }
reply submit_solution(const context& ctx, request& req) { return evaluate_solution(ctx, req, evaluation::submit); }

reply run_in_sandbox(const context& ctx, request& req) {
  if (auto refused = refuse_multicast(ctx, req)) return *refused;
  return run_sandboxed(ctx, req, sandbox_for(ctx, req), req.args);
}

reply profile_solution(const context& ctx, request& req) {
  if (auto refused = refuse_multicast(ctx, req)) return *refused;
  const auto ncu = find_on_path("ncu");
  if (!ncu || !ctx.cuda()) return {1, ctx.texts->profile_unavailable.render({{"cpu", ctx.cuda() ? "" : "1"}})};
  sandbox::spec s = sandbox_for(ctx, req);
  // pkagent itself, its shared libraries and the problems, visible inside even where they live
  // under /tmp or $HOME.
  const fs::path self = ctx.pkagent.empty() ? fs::read_symlink("/proc/self/exe") : ctx.pkagent;
  fs::path dir = fs::absolute(ctx.problem.dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "…/1_allreduce/"
  const fs::path suite = dir.parent_path();
  const fs::path home = fs::absolute(config::home());
  s.binds.push_back({self, std::string(profile_bin_inside), false});
  s.binds.push_back({suite, suite, false});
  s.binds.push_back({home, home, false});
  // The ranks of that pkagent (--sandbox none) preload the multicast guard from its build path.
  if (const fs::path guard = sandbox::multicast_guard_library(); fs::exists(guard))
    s.binds.push_back({guard, guard, false});
  s.own_libraries = true;
  // ncu gets the command's time less a margin for the plain trial before it and the CSV export
  // after it, so that a hang still ends in its own log.
  const int ncu_s = std::max(10, static_cast<int>(ctx.command_timeout_s * 0.75) - 10);
  const std::string command =
      profile_command({*ncu, profile_bin_inside, suite, ctx.problem.id, ctx.eval.world, ctx.check_seed, ncu_s,
                       ctx.texts->profile.stopped.render({{"seconds", std::to_string(ncu_s)}})});
  reply r = run_sandboxed(ctx, req, s, {command});
  r.output = summarize_profile(r.output, r.exit, ctx.texts->profile);
  req.log["output"] = r.output;  // the episode page shows each profile beside the step that asked for it
  return r;
}

}  // namespace pk::pkb
