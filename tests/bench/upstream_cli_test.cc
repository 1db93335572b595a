// Upstream mode end to end on CPU (gloo, two ranks, bwrap): `pkagent eval --suite-dir` pointing at a
// directory in ParallelKernelBench's layout (pkb_checkout/: our own tiny references and input
// generator with PKB's interface), and the refusals of paths that are no checkout, unknown ids and a
// generator that cannot be imported.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "eval_runner.h"

namespace pk::bench {
namespace {

using testing::run_pkagent;
using testing::source_root;
using testing::test_data;

std::filesystem::path cache_dir() { return std::filesystem::path(::testing::TempDir()) / "pk_upstream_cli_cache"; }

testing::eval_run eval_upstream(const std::string& checkout, const std::string& problem, const std::string& candidate) {
  return run_pkagent({"eval", "-q", "--json", "--device", "cpu", "--world", "2", "--no-perf", "--trials", "2",
                      "--suite-dir", test_data(checkout).string(), "--problem", problem, "--solution",
                      test_data("candidates/" + candidate).string()},
                     cache_dir());
}

TEST(upstream_cli, problems_lists_the_checkout) {
  const auto r = run_pkagent({"problems", "--json", "--suite-dir", test_data("pkb_checkout").string()}, cache_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto list = nlohmann::json::parse(r.out);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["id"], 1);
  EXPECT_EQ(list[0]["stem"], "allreduce");
  EXPECT_EQ(list[1]["stem"], "scaled_rows");
  EXPECT_EQ(list[1]["world_sizes"], "any");
  EXPECT_EQ(list[2]["stem"], "stacked_allgather");
}

TEST(upstream_cli, correct_candidate_is_correct) {
  const auto r = eval_upstream("pkb_checkout", "1", "pkb_allreduce_correct.py");
  ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
  EXPECT_EQ(r.report["verdict"], "correct") << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.report["trials"].size(), 2u);
  EXPECT_EQ(r.report["upstream"], test_data("pkb_checkout").string());
}

TEST(upstream_cli, random_inputs_from_the_checkouts_generator) {
  const auto r = eval_upstream("pkb_checkout", "scaled_rows", "pkb_scaled_rows_correct.py");
  ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
  EXPECT_EQ(r.report["verdict"], "correct") << r.report.dump(2);
}

TEST(upstream_cli, wrong_candidate_is_a_mismatch) {
  const auto r = eval_upstream("pkb_checkout", "1_allreduce", "pkb_allreduce_wrong.py");
  ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
  EXPECT_EQ(r.report["verdict"], "mismatch") << r.report.dump(2);
  EXPECT_NE(r.report["message"].get<std::string>().find("rank 0: output: 1048576 of 1048576 elements differ"),
            std::string::npos)
      << r.report["message"];
  EXPECT_TRUE(r.report["trials"][0]["ranks"][1]["ok"]) << "rank 1 is right";
  EXPECT_EQ(r.exit_code, 1);
}

TEST(upstream_cli, a_generator_that_cannot_be_imported_is_named) {
  const auto r = eval_upstream("pkb_checkout_broken", "1", "pkb_allreduce_wrong.py");
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_NE(r.err.find("importing ParallelKernelBench's input generator utils/input_output_tensors.py"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pkagent_fixture_module_that_does_not_exist"), std::string::npos) << r.err;
}

// CPU mode takes what NCCL takes: a reference that gathers straight into a stacked (W, M, N) output
// (as ParallelKernelBench's allgather does; gloo alone refuses it) is judged in both directions, as
// the reference against our port of the problem and as a candidate of our suite's problem.
TEST(upstream_cli, a_gather_into_a_stacked_output_runs_on_cpu_both_ways) {
  const std::string port = (source_root() / "bench/problems/2_allgather/reference.py").string();
  const std::string stacked = test_data("pkb_checkout/reference/3_stacked_allgather.py").string();
  {
    const char* world = "2";  // world 4 is the worker test's (bench_gloo_like_nccl): this one is end to end
    auto r = run_pkagent({"eval", "-q", "--json", "--device", "cpu", "--world", world, "--no-perf", "--trials", "2",
                          "--suite-dir", test_data("pkb_checkout").string(), "--problem", "3", "--solution", port},
                         cache_dir());
    ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
    EXPECT_EQ(r.report["verdict"], "correct") << "world " << world << ": " << r.report.dump(2);
    r = run_pkagent({"eval", "-q", "--json", "--device", "cpu", "--world", world, "--no-perf", "--trials", "2",
                     "--problem", "2", "--solution", stacked},
                    cache_dir());
    ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
    EXPECT_EQ(r.report["verdict"], "correct") << "world " << world << ": " << r.report.dump(2);
  }
}

// Bad input: one clear line and exit code 2, before any rank starts.
void expect_refusal(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = run_pkagent(args, cache_dir());
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr lacks '" << needle << "':\n" << r.err;
}

TEST(upstream_cli, bad_checkouts_and_ids_are_refused) {
  const std::string good = test_data("candidates/pkb_allreduce_correct.py").string();
  const std::string checkout = test_data("pkb_checkout").string();
  expect_refusal({"eval", "--device", "cpu", "--suite-dir", checkout, "--problem", "4", "--solution", good},
                 "unknown problem '4': the suite has ids 1, 2, 3");
  expect_refusal({"eval", "--device", "cpu", "--suite-dir", checkout, "--problem", "nosuchstem", "--solution", good},
                 "unknown problem 'nosuchstem'");
  // A directory that is neither our format nor a checkout.
  expect_refusal({"eval", "--device", "cpu", "--suite-dir", test_data("candidates").string(), "--problem", "1",
                  "--solution", good},
                 "holds no problems");
  // A checkout without its generator.
  const auto partial = std::filesystem::path(::testing::TempDir()) / "pk_partial_checkout";
  std::filesystem::create_directories(partial / "reference");
  std::filesystem::copy_file(test_data("pkb_checkout/reference/1_allreduce.py"), partial / "reference/1_allreduce.py",
                             std::filesystem::copy_options::overwrite_existing);
  expect_refusal({"problems", "--suite-dir", partial.string()},
                 (partial / "utils/input_output_tensors.py").string() + ": missing; upstream mode imports");
  expect_refusal({"eval", "--device", "cpu", "--suite-dir", "/nonexistent/pkb", "--problem", "1", "--solution", good},
                 "/nonexistent/pkb: no such problem directory");
}

}  // namespace
}  // namespace pk::bench
