// Test helper: runs the real `pkagent eval` binary and parses its --json report.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sandbox/process.h"

extern char** environ;

namespace pk::bench::testing {

struct eval_run {
  int exit_code = -1;
  bool timed_out = false;  ///< still running at the limit, and killed
  nlohmann::json report;   ///< null unless stdout was JSON
  std::string out, err;
  double wall_seconds = 0;
};

inline std::filesystem::path test_data(const std::string& rel) { return std::filesystem::path(PKAGENT_TEST_DATA) / rel; }
inline std::filesystem::path source_root() { return std::filesystem::path(PKAGENT_TEST_DATA).parent_path().parent_path(); }

/// How to run pkagent beyond its arguments: this process's environment with `env` over it (an
/// empty value removes the variable), killed after `timeout`.
struct run_options {
  std::map<std::string, std::string> env;
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
};

/// Runs `pkagent ARGS...` and parses its --json report.
inline eval_run run_pkagent(const std::vector<std::string>& args, const run_options& o) {
  sandbox::process_spec ps;
  ps.argv = {std::string(PKAGENT_BIN_DIR) + "/pkagent"};
  ps.argv.insert(ps.argv.end(), args.begin(), args.end());
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) ps.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : o.env) {
    if (v.empty()) ps.env.erase(k);
    else ps.env[k] = v;
  }
  ps.output_cap = 16 << 20;
  ps.timeout = o.timeout;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = sandbox::run_process(ps);
  eval_run run;
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = r.exit_code;
  run.timed_out = r.timed_out;
  run.out = r.out.text;
  run.err = r.err.text;
  run.report = nlohmann::json::parse(run.out, nullptr, false);
  if (run.report.is_discarded()) run.report = nullptr;
  return run;
}

/// Runs `pkagent ARGS...` with its reference cache in `cache` (shared by one test binary).
inline eval_run run_pkagent(const std::vector<std::string>& args, const std::filesystem::path& cache) {
  return run_pkagent(args, run_options{{{"PKAGENT_CACHE", cache.string()}}});
}

}  // namespace pk::bench::testing
