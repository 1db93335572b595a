// Test helper: runs the real `pkagent eval` binary and parses its --json report.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sandbox/process.h"

extern char** environ;

namespace pk::bench::testing {

struct eval_run {
  int exit_code = -1;
  nlohmann::json report;  ///< null unless stdout was JSON
  std::string out, err;
  double wall_seconds = 0;
};

inline std::filesystem::path test_data(const std::string& rel) { return std::filesystem::path(PKAGENT_TEST_DATA) / rel; }
inline std::filesystem::path source_root() { return std::filesystem::path(PKAGENT_TEST_DATA).parent_path().parent_path(); }

/// Runs `pkagent ARGS...` with its reference cache in `cache` (shared by one test binary).
inline eval_run run_pkagent(const std::vector<std::string>& args, const std::filesystem::path& cache) {
  sandbox::process_spec ps;
  ps.argv = {std::string(PKAGENT_BIN_DIR) + "/pkagent"};
  ps.argv.insert(ps.argv.end(), args.begin(), args.end());
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) ps.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  ps.env["PKAGENT_CACHE"] = cache.string();
  ps.output_cap = 16 << 20;
  ps.timeout = std::chrono::minutes(10);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = sandbox::run_process(ps);
  eval_run run;
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = r.exit_code;
  run.out = r.out.text;
  run.err = r.err.text;
  run.report = nlohmann::json::parse(run.out, nullptr, false);
  if (run.report.is_discarded()) run.report = nullptr;
  return run;
}

}  // namespace pk::bench::testing
