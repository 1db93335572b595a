// `pkagent run` of the demo model on the GPU host: an agent episode on problem 1 that writes,
// checks and submits a correct solution, and a 16-episode zero-shot run over problems 1-8 with
// 8 concurrent episodes sharing the host's GPUs through the scheduler.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <boost/process.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/metrics/results_file.h"
#include "bench/scheduler/host_gpus.h"
#include "sandbox/sandbox.h"

namespace pk::run {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;

class run_gpu_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (scheduler::detect_host_gpus().size() < 2) GTEST_SKIP() << "needs 2 NVIDIA GPUs (/dev/nvidia0, 1); none here";
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkrun-gpu-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }
  int pkagent(const std::vector<std::string>& args, std::string* text) {
    const fs::path log = dir_ / "log";
    bp::child c(bp::exe = std::string(PKAGENT_BIN_DIR) + "/pkagent", bp::args = args,
                (bp::std_out & bp::std_err) > log.string());
    c.wait();
    std::ifstream in(log);
    *text = {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return c.exit_code();
  }
  fs::path dir_;
};

TEST_F(run_gpu_test, DemoAgentSolvesProblem1) {
  const fs::path out = dir_ / "agent";
  std::string text;
  ASSERT_EQ(pkagent({"run", "--mode", "agent", "--model", "demo", "--problems", "1", "--device", "cuda", "--out",
                     out.string()}, &text), 0) << text;
  const auto r = metrics::read_results(out / "results.jsonl");
  ASSERT_EQ(r.results.size(), 1u) << text;
  const auto& e = r.results[0];
  EXPECT_TRUE(e.correct) << e.verdict << "\n" << text;
  EXPECT_EQ(e.end_reason, "submitted");
  ASSERT_TRUE(e.speedup.has_value());
  EXPECT_GT(*e.speedup, 0.5);  // the reference against itself
  EXPECT_LT(*e.speedup, 2.0);
  EXPECT_GT(e.gpu_seconds, 0);
  std::ifstream pkb_log(out / "episodes" / "1_allreduce" / "sample-0" / "pkb.jsonl");
  std::string all((std::istreambuf_iterator<char>(pkb_log)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("\"command\":\"check\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"command\":\"bench\""), std::string::npos) << all;
}

TEST_F(run_gpu_test, DemoZeroShotSixteenEpisodesEightAtATime) {
  const fs::path out = dir_ / "zs";
  std::string text;
  ASSERT_EQ(pkagent({"run", "--mode", "zeroshot", "--model", "demo", "--problems", "1-8", "--samples", "2", "--jobs",
                     "8", "--device", "cuda", "--out", out.string()}, &text), 0) << text;
  const auto r = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(r.skipped.empty());
  ASSERT_EQ(r.results.size(), 16u) << text;
  std::set<std::pair<int, int>> seen;
  for (const auto& e : r.results) {
    seen.insert({e.problem_id, e.sample});
    EXPECT_TRUE(e.correct) << e.problem_id << ": " << e.verdict;
  }
  EXPECT_EQ(seen.size(), 16u);
  ASSERT_EQ(pkagent({"report", out.string()}, &text), 0) << text;
}

}  // namespace
}  // namespace pk::run
