#include "bench/metrics/results_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sample_result.h"

namespace {

using namespace pk::metrics;
using pk::metrics::testing::sample_result;
namespace fs = std::filesystem;

class results_file_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pk_results_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(results_file_test, append_then_read_gives_the_results_back_in_order) {
  auto file = dir_ / "results.jsonl";
  for (int s = 0; s < 3; ++s) append_result(file, sample_result(1, s));
  auto read = read_results(file);
  EXPECT_TRUE(read.skipped.empty());
  ASSERT_EQ(read.results.size(), 3u);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(read.results[s].sample, s);
  // One line per result, each a complete JSON object.
  std::ifstream in(file);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 3);
}

TEST_F(results_file_test, bad_lines_are_skipped_with_file_line_and_reason_and_the_rest_is_read) {
  auto file = dir_ / "results.jsonl";
  auto good = [](int problem, int sample) { return to_json(sample_result(problem, sample)).dump(); };
  auto edited = to_json(sample_result(2, 0));
  edited["problem"]["category"] = "gemm";
  {
    std::ofstream out(file);
    out << good(1, 0) << "\n"                 // 1
        << "{\"version\": 1, \"run_id\"\n"    // 2: not JSON
        << "\n"                               // 3: blank, ignored
        << edited.dump() << "\n"              // 4: bad category
        << good(1, 1) << "\n"                 // 5
        << good(1, 0) << "\n"                 // 6: duplicate of 1
        << good(3, 0).substr(0, 40);          // 7: cut short by a kill
  }
  auto read = read_results(file);
  ASSERT_EQ(read.results.size(), 2u);
  EXPECT_EQ(read.results[0].sample, 0);
  EXPECT_EQ(read.results[1].sample, 1);
  ASSERT_EQ(read.skipped.size(), 4u);
  EXPECT_EQ(describe(read.skipped[0]), file.string() + ":2: not valid JSON");
  EXPECT_EQ(describe(read.skipped[1]),
            file.string() + ":4: problem.category: \"gemm\" is not one of primitive, gemm_comm, fused, moe, "
                            "sequence_parallel, optimizer, domain, upstream");
  EXPECT_EQ(describe(read.skipped[2]),
            file.string() + ":6: duplicate of line 1 (run run-1, problem 1, sample 0); the first is kept");
  EXPECT_EQ(describe(read.skipped[3]),
            file.string() + ":7: not valid JSON (the last line is cut short: was the writer killed?)");
}

TEST_F(results_file_test, a_retried_infrastructure_failure_is_replaced_by_its_later_line) {
  auto file = dir_ / "results.jsonl";
  auto lost = sample_result(1, 0);
  lost.verdict = std::string(infrastructure_verdict);
  lost.correct = false;
  lost.speedup = lost.noise = std::nullopt;
  lost.timings = std::nullopt;
  lost.end_reason = "harness_error";
  append_result(file, lost);               // 1: the first attempt failed
  append_result(file, sample_result(2, 0));  // 2
  append_result(file, lost);               // 3: so did the second
  append_result(file, sample_result(1, 0));  // 4: the third was scored
  append_result(file, lost);               // 5: a real result is never replaced
  auto read = read_results(file);
  ASSERT_EQ(read.results.size(), 2u);
  EXPECT_EQ(read.results[0].problem_id, 1);
  EXPECT_EQ(read.results[0].verdict, "correct");
  EXPECT_EQ(read.results[1].problem_id, 2);
  ASSERT_EQ(read.skipped.size(), 1u);
  EXPECT_EQ(describe(read.skipped[0]),
            file.string() + ":5: duplicate of line 4 (run run-1, problem 1, sample 0); the first is kept");
}

TEST_F(results_file_test, concurrent_appends_never_interleave) {
  auto file = dir_ / "results.jsonl";
  constexpr int threads = 8, per_thread = 150;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        auto r = sample_result(t + 1, i);
        r.transcript = std::string(2000 + 37 * i, 'x');  // long lines make torn writes likelier
        append_result(file, r);
      }
    });
  for (auto& th : pool) th.join();
  auto read = read_results(file);
  EXPECT_TRUE(read.skipped.empty()) << (read.skipped.empty() ? "" : describe(read.skipped.front()));
  ASSERT_EQ(read.results.size(), static_cast<std::size_t>(threads * per_thread));
  std::set<std::pair<int, int>> seen;
  for (const auto& r : read.results) seen.emplace(r.problem_id, r.sample);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(threads * per_thread));
}

TEST_F(results_file_test, io_errors_name_the_file) {
  auto missing = dir_ / "no-such-dir" / "results.jsonl";
  try {
    append_result(missing, sample_result());
    FAIL() << "append into a missing directory succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string() + ": cannot open for appending"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_results(missing), std::runtime_error);
}

}  // namespace
