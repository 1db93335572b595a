// `pkagent eval` end to end on CPU (gloo, two ranks, in the bwrap sandbox): the judge's verdict
// and message for a correct candidate and for each kind of broken one, and the CLI's refusals of
// bad input. Candidates are in candidates/.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "eval_runner.h"

namespace pk::bench {
namespace {

using testing::run_pkagent;
using testing::test_data;

std::filesystem::path cache_dir() { return std::filesystem::path(::testing::TempDir()) / "pk_judge_cli_cache"; }

testing::eval_run eval_cpu(const std::string& candidate, std::vector<std::string> extra = {}, int trials = 2) {
  std::vector<std::string> args = {"eval", "-q", "--json", "--problem", "1", "--device", "cpu", "--no-perf",
                                   "--trials", std::to_string(trials), "--solution",
                                   test_data("candidates/" + candidate).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_pkagent(args, cache_dir());
}

// Expects `verdict` and a message containing `needle`, and exit code 1.
void expect_verdict(const testing::eval_run& r, const std::string& verdict, const std::string& needle) {
  ASSERT_TRUE(r.report.is_object()) << "no JSON report; stderr:\n" << r.err << "\nstdout:\n" << r.out;
  EXPECT_EQ(r.report["verdict"], verdict) << r.report.dump(2);
  EXPECT_NE(r.report["message"].get<std::string>().find(needle), std::string::npos)
      << "message lacks '" << needle << "':\n" << r.report["message"].get<std::string>();
  EXPECT_EQ(r.exit_code, 1);
}

TEST(judge_cli, correct_candidate_is_correct) {
  const auto r = eval_cpu("allreduce_correct.py");
  ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
  EXPECT_EQ(r.report["verdict"], "correct") << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.report["trials"].size(), 2u);
}

// With timing, trial 1's inputs come after a varying number of timed calls: its seeds must not
// depend on them, or its reference outputs, cached by the first run, would not match the second.
TEST(judge_cli, cached_reference_outputs_of_later_trials_match_after_timing) {
  const std::filesystem::path cache = std::filesystem::path(::testing::TempDir()) / "pk_judge_cli_timed_cache";
  std::filesystem::remove_all(cache);
  const std::vector<std::string> args = {"eval", "-q", "--json", "--problem", "1", "--device", "cpu", "--trials", "2",
                                         "--min-calls", "10", "--solution",
                                         test_data("candidates/allreduce_correct.py").string()};
  for (int run = 0; run < 2; ++run) {
    const auto r = run_pkagent(args, cache);
    ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
    EXPECT_EQ(r.report["verdict"], "correct") << "run " << run << ": " << r.report["message"];
    EXPECT_EQ(r.report["reference_cached"], run == 1);
  }
}

TEST(judge_cli, wrong_values) {
  const auto r = eval_cpu("allreduce_wrong_values.py");
  // Off by one differs beyond the tolerance wherever |value| < 100 (rtol 1e-2), most of the tensor.
  expect_verdict(r, "mismatch", "rank 1: output: ");
  // The inputs are random integers: rank 1's first element is the reference's plus one.
  const std::string message = r.report["message"].get<std::string>();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(message, m, std::regex(R"(got (-?[0-9.]+), the reference (-?[0-9.]+))"))) << message;
  EXPECT_EQ(std::stod(m[1].str()), std::stod(m[2].str()) + 1) << message;
  EXPECT_TRUE(r.report["trials"][0]["ranks"][0]["ok"]) << "rank 0 is right";
}

TEST(judge_cli, an_answer_right_only_on_the_usual_values_fails_in_trial_1) {
  const auto one = eval_cpu("allreduce_usual_values_only.py", {}, 1);
  ASSERT_TRUE(one.report.is_object()) << one.err << one.out;
  EXPECT_EQ(one.report["verdict"], "correct") << "trial 0 draws the usual values: " << one.report["message"];
  const auto two = eval_cpu("allreduce_usual_values_only.py");
  expect_verdict(two, "mismatch", "output: ");
  ASSERT_EQ(two.report["trials"].size(), 2u) << two.report.dump(2);
  EXPECT_TRUE(two.report["trials"][0]["correct"]);
  EXPECT_FALSE(two.report["trials"][1]["correct"]) << "trial 1 draws from the second distribution";
}

TEST(judge_cli, wrong_shape) {
  expect_verdict(eval_cpu("allreduce_wrong_shape.py"), "mismatch",
                 "shape (1024, 512) but the reference has shape (1024, 1024)");
}

TEST(judge_cli, wrong_dtype) {
  expect_verdict(eval_cpu("allreduce_wrong_dtype.py"), "mismatch",
                 "dtype float32 but the reference has dtype bfloat16");
}

TEST(judge_cli, nan_output) {
  expect_verdict(eval_cpu("allreduce_nan.py"), "mismatch", "NaN or Inf where the reference is finite, first at [3, 7]");
}

TEST(judge_cli, one_rank_raising) {
  expect_verdict(eval_cpu("allreduce_rank_raises.py"), "runtime_error",
                 "rank 1: solution(...) raised RuntimeError in trial 0: deliberate failure on rank 1");
}

TEST(judge_cli, one_rank_hanging_is_killed_within_the_timeout) {
  const auto ok = eval_cpu("allreduce_correct.py", {}, 1);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const double timeout = 5;
  const auto r = eval_cpu("allreduce_rank_hangs.py", {"--timeout", "5"}, 1);
  expect_verdict(r, "timeout", "spent more than 5 s in phase 'trial 0'");
  EXPECT_NE(r.report["message"].get<std::string>().find("all ranks were killed"), std::string::npos);
  // Start-up (imports, rendezvous) is what the correct run took; the hang may add the timeout + 5 s.
  EXPECT_LT(r.wall_seconds, ok.wall_seconds + timeout + 5) << "correct run " << ok.wall_seconds << " s";
}

TEST(judge_cli, input_mutation) {
  expect_verdict(eval_cpu("allreduce_mutates_input.py"), "mismatch",
                 "input[0]: the call modified this input, which the reference leaves unchanged");
}

TEST(judge_cli, syntax_error) {
  expect_verdict(eval_cpu("allreduce_syntax_error.py"), "compile_error",
                 "syntax error in allreduce_syntax_error.py line 5");
}

TEST(judge_cli, missing_solution) {
  expect_verdict(eval_cpu("allreduce_no_solution.py"), "compile_error",
                 "allreduce_no_solution.py defines no `solution` function");
}

TEST(judge_cli, exiting_early) {
  expect_verdict(eval_cpu("allreduce_exits_early.py"), "runtime_error", "raised SystemExit in trial 0");
}

// NVLink multicast: refused from the source before anything runs (module-level code in these
// candidates raises, which would read compile_error had it run), or from what the run produced.
TEST(judge_cli, multimem_inline_asm_is_refused_before_it_runs) {
  const auto r = eval_cpu("forbidden_multimem_asm.py");
  expect_verdict(r, "forbidden",
                 "forbidden_multimem_asm.py:14: PTX multimem instruction "
                 "'multimem.ld_reduce.relaxed.sys.global.add.f32' (source)");
  EXPECT_NE(r.report["message"].get<std::string>().find("refused before running"), std::string::npos);
  EXPECT_NE(r.report["message"].get<std::string>().find("out of service"), std::string::npos);
  EXPECT_TRUE(r.report["trials"].empty());
}

TEST(judge_cli, cumulticast_is_refused_before_it_runs) {
  expect_verdict(eval_cpu("forbidden_cumulticast.py"), "forbidden",
                 "forbidden_cumulticast.py:19: CUDA driver multicast API 'cuMulticastCreate' (source)");
}

TEST(judge_cli, multicast_in_what_the_run_produced_is_refused) {
  expect_verdict(eval_cpu("forbidden_after_run.py", {}, 1), "forbidden",
                 "JIT build directory/rank0/kernel.ptx:4: PTX multimem instruction "
                 "'multimem.ld_reduce.relaxed.sys.global.add.bf16x2' (text)");
}

TEST(judge_cli, scan_multicast_command) {
  const auto dirty = run_pkagent({"scan-multicast", test_data("candidates").string()}, cache_dir());
  EXPECT_EQ(dirty.exit_code, 1) << dirty.err;
  EXPECT_NE(dirty.err.find("forbidden_cumulticast.py:19: CUDA driver multicast API 'cuMulticastCreate' (text)"),
            std::string::npos)
      << dirty.err;
  const auto clean = run_pkagent({"scan-multicast", "--json", test_data("candidates/allreduce_correct.py").string()},
                                 cache_dir());
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.out, "[]\n");
  EXPECT_EQ(run_pkagent({"scan-multicast", "/nonexistent/x.so"}, cache_dir()).exit_code, 2);
}

// Bad input: a clear one-line message and exit code 2, before any rank starts.
void expect_refusal(const std::vector<std::string>& args, const std::string& needle) {
  const auto r = run_pkagent(args, cache_dir());
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr lacks '" << needle << "':\n" << r.err;
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos);
}

TEST(judge_cli, bad_input_is_refused_with_the_fix) {
  const std::string good = test_data("candidates/allreduce_correct.py").string();
  expect_refusal({"eval", "--problem", "999", "--solution", good, "--device", "cpu"},
                 "unknown problem '999': the suite has ids 1, ");
  expect_refusal({"eval", "--problem", "1", "--solution", good, "--device", "cpu", "--min-calls", "200",
                  "--max-calls", "100"},
                 "--min-calls 200 is above --max-calls 100: raise --max-calls");
  expect_refusal({"eval", "--problem", "1", "--solution", "/nonexistent/sol.py", "--device", "cpu"},
                 "solution file /nonexistent/sol.py does not exist");
  expect_refusal({"eval", "--problem", "1", "--solution", good, "--device", "cpu", "--world", "3"},
                 "problem 1_allreduce does not support world size 3: use --world with one of 1, 2, 4, 8");
  expect_refusal({"eval", "--problem", "1", "--solution", good, "--device", "cuda", "--world", "8"},
                 "world size 8 needs 8 GPUs but this machine has");
}

TEST(judge_cli, problems_lists_the_suite_with_bounds) {
  const auto r = run_pkagent({"problems", "--json"}, cache_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto list = nlohmann::json::parse(r.out);
  ASSERT_GE(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], 1);
  EXPECT_EQ(list[0]["stem"], "allreduce");
  // 2 (W-1)/W M N E bytes over 396 GB/s at W=2: 2*0.5*1024*1024*2 / 396e9.
  EXPECT_NEAR(list[0]["roofline"]["seconds"].get<double>(), 2.0 * 1024 * 1024 / 396e9, 1e-9);
  EXPECT_EQ(list[0]["roofline"]["limiter"], "link");
}

// Some problems are not defined at one rank (their formulas need W >= 2): listing at W = 1 gives
// those no bound rather than refusing the suite over one formula's value there.
TEST(judge_cli, problems_at_a_world_some_lack_list_them_without_a_bound) {
  const auto r = run_pkagent({"problems", "--json", "--world", "1"}, cache_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto list = nlohmann::json::parse(r.out);
  int bound = 0, unbound = 0;
  for (const auto& p : list) {
    const auto& w = p["world_sizes"];
    const bool at_one = std::find(w.begin(), w.end(), 1) != w.end();
    EXPECT_EQ(p["roofline"].is_null(), !at_one) << p["stem"];
    (at_one ? bound : unbound) += 1;
  }
  EXPECT_GT(bound, 0);
  EXPECT_GT(unbound, 0);
  const auto text = run_pkagent({"problems", "--world", "1"}, cache_dir());
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("no W=1"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace pk::bench
