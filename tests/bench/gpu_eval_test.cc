// The judge on the host's GPUs (NCCL, bwrap) at W = min(2, GPUs): every reference defined at W passes
// as its own candidate (one zero-shot run of the demo model, whose answer is the reference), identical
// code times as identical (speedup within [0.97, 1.03] in every trial), and a candidate made 5% slower
// is reported slower in every trial. Skipped (with the reason) on machines without a GPU.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "bench/metrics/results_file.h"
#include "bench/suite/problem.h"
#include "bench/suite/suite.h"
#include "eval_runner.h"
#include "sandbox/gpu_devices.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;
using testing::run_pkagent;
using testing::source_root;

fs::path cache_dir() { return fs::path(::testing::TempDir()) / "pk_gpu_eval_cache"; }

class gpu_eval : public ::testing::Test {
 protected:
  void SetUp() override {
    const int n = sandbox::visible_gpu_count();
    if (n < 1) GTEST_SKIP() << "needs 1 GPU; this machine has none";
    world_ = std::min(2, n);
  }
  nlohmann::json eval(const std::string& problem, const fs::path& solution, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"eval", "-q", "--json", "--world", std::to_string(world_), "--trials", "5",
                                     "--problem", problem, "--solution", solution.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_pkagent(args, cache_dir());
    EXPECT_TRUE(r.report.is_object()) << r.err << r.out;
    if (r.report.is_object())
      std::cout << problem << " " << solution.filename().string() << " at W=" << world_ << ": "
                << r.report["verdict"] << " in " << r.wall_seconds << " s" << std::endl;
    return r.report;
  }
  static std::vector<double> speedups(const nlohmann::json& report) {
    std::vector<double> s;
    for (const auto& t : report["trials"])
      if (t["speedup"].is_number()) s.push_back(t["speedup"]);
    return s;
  }
  int world_ = 0;  ///< ranks per evaluation: 2, or 1 on a host with one GPU
};

// One `pkagent run` rather than an evaluation per problem: its ranks stay warm across the problems.
TEST_F(gpu_eval, references_pass_as_candidates) {
  std::vector<int> ids;
  for (const auto& p : load_suite(default_suite_dir()))
    if (p.supports_world(world_)) ids.push_back(p.id);
  ASSERT_FALSE(ids.empty());
  const fs::path out = fs::path(::testing::TempDir()) / fmt::format("pk_gpu_eval_references_w{}", world_);
  fs::remove_all(out);
  testing::run_options o{{{"PKAGENT_CACHE", cache_dir().string()}}, std::chrono::minutes(20)};
  const auto r = run_pkagent({"run", "--mode", "zeroshot", "--model", "demo", "--no-perf", "--device", "cuda",
                              "--world", std::to_string(world_), "--jobs", "4", "--problems",
                              fmt::format("{}", fmt::join(ids, ",")), "--out", out.string(), "-q"},
                             o);
  std::cout << ids.size() << " references at W=" << world_ << " in " << r.wall_seconds << " s" << std::endl;
  ASSERT_FALSE(r.timed_out) << r.err;
  const auto results = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(results.skipped.empty());
  EXPECT_EQ(results.results.size(), ids.size()) << r.out << r.err;
  for (const auto& e : results.results)
    EXPECT_TRUE(e.correct) << e.stem << " at W=" << world_ << ": " << e.verdict;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(gpu_eval, identical_code_times_as_identical) {
  for (const std::string p : {"1_allreduce", "13_gemm_allreduce"}) {
    const auto r = eval(p, source_root() / "bench/problems" / p / "reference.py");
    ASSERT_EQ(r.value("verdict", ""), "correct") << r.value("message", "");
    const auto s = speedups(r);
    ASSERT_EQ(s.size(), 5u);
    for (std::size_t t = 0; t < s.size(); ++t) {
      std::cout << p << " trial " << t << " self-vs-self speedup " << s[t] << std::endl;
      EXPECT_GE(s[t], 0.97) << p << " trial " << t;
      EXPECT_LE(s[t], 1.03) << p << " trial " << t;
    }
  }
}

TEST_F(gpu_eval, five_percent_slower_is_reported_slower_in_every_trial) {
  const auto r = eval("1_allreduce", source_root() / "tests/bench/candidates/gpu_allreduce_5pct_slower.py");
  ASSERT_EQ(r.value("verdict", ""), "correct") << r.value("message", "");
  const auto s = speedups(r);
  ASSERT_EQ(s.size(), 5u);
  for (std::size_t t = 0; t < s.size(); ++t) {
    std::cout << "5% slower trial " << t << " speedup " << s[t] << std::endl;
    EXPECT_LT(s[t], 1.0) << "trial " << t;
  }
  // The candidate spins 5% of the reference's call time: pooled over trials the judge must see
  // about 1/1.05 = 0.952, not a larger slowdown that would make the test easy to pass.
  ASSERT_TRUE(r["speedup"].is_number()) << r.dump(2);
  const double pooled = r["speedup"].get<double>();
  std::cout << "5% slower pooled speedup " << pooled << std::endl;
  EXPECT_GT(pooled, 0.92) << "the candidate is slower than 5% (its calibration overshoots)";
  EXPECT_LT(pooled, 0.98) << "the candidate is faster than 5% slower (its calibration undershoots)";
}

}  // namespace
}  // namespace pk::bench
