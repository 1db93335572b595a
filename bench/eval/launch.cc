#include "bench/eval/launch.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sandbox/process.h"

namespace pk::bench {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path self_executable() { return fs::read_symlink("/proc/self/exe"); }

namespace {

// The most a run can take: compile, then every later phase at its limit, plus a margin.
std::chrono::milliseconds total_limit(const launch_spec& s, int phases) {
  const double seconds = s.import_timeout_s + s.phase_timeout_s * phases + 30;
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

int count_phases(const fs::path& plan_file) {
  std::ifstream in(plan_file);
  const json plan = json::parse(in);
  const int trials = static_cast<int>(plan.at("trials").size());
  return 3 + trials * (plan.value("perf", json()).is_null() ? 1 : 2);
}

}  // namespace

launch_outcome launch(const launch_request& req) {
  std::ofstream(req.workspace / "launch.json") << to_json(req.spec).dump(2);
  const auto limit = total_limit(req.spec, count_phases(req.workspace / req.spec.plan));
  const fs::path exe = self_executable();
  launch_outcome out;
  const auto t0 = std::chrono::steady_clock::now();

  if (req.isolation == sandbox::isolation::none) {
    // Development path (--sandbox none): the supervisor runs as a plain child of pkagent, with
    // pkagent's environment and only these GPUs visible.
    sandbox::process_spec ps;
    ps.argv = {exe.string(), "_ranks", req.workspace.string()};
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      auto eq = kv.find('=');
      if (eq != std::string::npos) ps.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (!req.gpus.empty()) ps.env["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(req.gpus, ","));
    ps.cwd = req.workspace;
    ps.timeout = limit;
    const auto r = sandbox::run_process(ps);
    if (r.timed_out) throw std::runtime_error(fmt::format("the rank supervisor overran its {} s limit",
                                                          limit.count() / 1000));
    if (r.exit_code != 0)
      throw std::runtime_error(fmt::format("the rank supervisor failed (exit {}, signal {}): {}", r.exit_code,
                                           r.signal, r.err.text));
  } else {
    sandbox::spec s;
    s.workspace = req.workspace;
    s.gpus = req.gpus;
    s.limits.wall = limit;
    s.limits.output_bytes = 256 << 10;
    s.binds = req.binds;
    s.binds.push_back({exe.parent_path(), exe.parent_path(), false});
    // The sandbox hides $HOME; a Python environment kept there (the default venv in
    // ~/.cache/pkagent) is bound back read-only at the same path.
    // So is the interpreter the venv links to when it lives there too (pyenv, conda).
    std::error_code ec;
    const fs::path python = req.spec.python;
    for (const fs::path& py : {python, fs::canonical(python, ec)}) {
      if (!py.is_absolute() || py.parent_path().filename() != "bin") continue;
      const fs::path prefix = py.parent_path().parent_path();
      const bool system = prefix == "/usr" || prefix == "/usr/local" || prefix == "/";
      const bool listed = std::any_of(s.binds.begin(), s.binds.end(), [&](const auto& b) { return b.host == prefix; });
      if (!system && !listed) s.binds.push_back({prefix, prefix, false});
    }
    s.isolation = req.isolation;
    const auto r = sandbox::run(s, fmt::format("exec '{}' _ranks /workspace", exe.string()));
    out.sandbox_note = r.note;
    if (r.timed_out) throw std::runtime_error(fmt::format("the sandboxed rank supervisor overran its {} s limit",
                                                          limit.count() / 1000));
    if (r.exit_code != 0)
      throw std::runtime_error(fmt::format("the sandboxed rank supervisor failed (exit {}, signal {}): {}{}",
                                           r.exit_code, r.signal, r.err.text, r.out.text));
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  json summary;
  try {
    std::ifstream in(req.workspace / "ranks.json");
    summary = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("the rank supervisor left no readable ranks.json: {}", e.what()));
  }
  out.failure = summary.at("failure");
  for (const json& r : summary.at("ranks")) {
    rank_outcome o;
    o.rank = r.at("rank");
    o.exit_code = r.at("exit_code");
    o.signal = r.at("signal");
    o.killed = r.at("killed");
    o.phase = r.at("phase");
    o.stdout_text = r.at("stdout");
    o.stderr_text = r.at("stderr");
    // Written by the rank itself (candidate code may have run there): parsed, never trusted for
    // the verdict beyond what it reports about its own failure.
    const fs::path result_file = req.workspace / req.spec.out_dir / fmt::format("rank{}", o.rank) / "result.json";
    if (fs::exists(result_file)) {
      try {
        std::ifstream in(result_file);
        o.result = json::parse(in);
        if (!o.result->is_object()) o.result.reset();
      } catch (const json::exception&) {
        o.result.reset();
      }
    }
    out.ranks.push_back(std::move(o));
  }
  return out;
}

}  // namespace pk::bench
