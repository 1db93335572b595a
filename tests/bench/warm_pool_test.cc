// Warm rank sets (bench/eval/sets/warm_pool.h) on CPU, through `pkagent eval` with several solutions: each
// evaluation after the first takes ranks started while the one before was judged. A candidate that
// marks its interpreter's globals, monkeypatches torch, and leaves a thread and a child behind has no
// effect on the candidate judged after it, and its child does not outlive its evaluation.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "eval_runner.h"
#include "sandbox/sandbox.h"

namespace pk::bench {
namespace {

using testing::run_pkagent;
using testing::test_data;

namespace fs = std::filesystem;

// Whether a process whose command line is exactly `argv` (NUL-separated) is running on this host.
bool running(const std::string& argv) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline == argv) return true;
  }
  return false;
}

class warm_pool_cli : public ::testing::TestWithParam<std::string> {};

TEST_P(warm_pool_cli, nothing_of_one_candidate_reaches_the_next) {
  const std::string isolation = GetParam();
  if (isolation == "bwrap")
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "bubblewrap cannot run here: " << *why;
  const fs::path cache = fs::path(::testing::TempDir()) / ("pk_warm_pool_cache_" + isolation);
  const std::string probe = test_data("candidates/warm_probe.py").string();
  const auto r = run_pkagent({"eval", "-q", "--json", "--problem", "1", "--device", "cpu", "--no-perf", "--trials",
                              "1", "--sandbox", isolation, "--solution", probe, "--solution",
                              test_data("candidates/warm_polluter.py").string(), "--solution", probe},
                             cache);
  ASSERT_TRUE(r.report.is_array()) << "stderr:\n" << r.err << "\nstdout:\n" << r.out;
  ASSERT_EQ(r.report.size(), 3u) << r.report.dump(2);
  EXPECT_EQ(r.report[0]["verdict"], "correct") << r.report[0].dump(2);
  // The polluter's answer is right, but what it left running is caught.
  EXPECT_EQ(r.report[1]["verdict"], "forbidden") << r.report[1].dump(2);
  EXPECT_EQ(r.report[1]["reason"], "background") << r.report[1].dump(2);
  // The probe answers wrong where it finds any trace of the polluter.
  EXPECT_EQ(r.report[2]["verdict"], "correct") << r.report[2].dump(2);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(running(std::string("sleep\0617\0", 10))) << "the polluter's child outlived its evaluation";
}

INSTANTIATE_TEST_SUITE_P(isolation, warm_pool_cli, ::testing::Values("bwrap", "none"));

}  // namespace
}  // namespace pk::bench
