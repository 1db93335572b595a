// `pkagent run --slurm` against a real single-node Slurm (slurm_cluster.h): a 4-shard array whose
// merged results and report equal the same run done locally; a shard cancelled mid-run and
// resubmitted; a shard that fails at start, reported and retried. Zero-shot with the demo model on
// CPU, one untimed trial per scoring, to keep the evaluator's share small.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <boost/process.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agent/run/slurm/shard.h"
#include "bench/metrics/results_file.h"
#include "sandbox/sandbox.h"
#include "slurm_cluster.h"

namespace pk::run {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;
using namespace std::chrono_literals;
using test_support::slurm_cluster;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> zero_shot(const std::string& problems, int samples) {
  return {"run", "--mode", "zeroshot", "--model", "demo", "--problems", problems, "--samples",
          std::to_string(samples), "--device", "cpu", "--trials", "1", "--no-perf"};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// verdict per episode, by (problem, sample)
std::map<std::pair<int, int>, std::string> verdicts(const fs::path& results) {
  std::map<std::pair<int, int>, std::string> v;
  for (const auto& r : metrics::read_results(results).results) v[{r.problem_id, r.sample}] = r.verdict;
  return v;
}

// The per-problem table of a markdown report: problem -> its "verdicts" cell.
std::map<std::string, std::string> verdict_cells(const std::string& report) {
  std::map<std::string, std::string> cells;
  const auto start = report.find("## Per problem");
  std::istringstream lines(report.substr(start == std::string::npos ? report.size() : start));
  int column = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) != 0) continue;
    std::vector<std::string> cols;
    std::stringstream row(line.substr(1));
    for (std::string c; std::getline(row, c, '|');) cols.push_back(std::regex_replace(c, std::regex("^ +| +$"), ""));
    if (column < 0) {
      column = static_cast<int>(std::find(cols.begin(), cols.end(), "verdicts") - cols.begin());
      continue;
    }
    if (cols.size() > static_cast<std::size_t>(column) && std::isdigit(static_cast<unsigned char>(cols[0][0])))
      cells[cols[0]] = cols[static_cast<std::size_t>(column)];
  }
  return cells;
}

class slurm_run_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = slurm_cluster::unavailable_reason()) GTEST_SKIP() << *why;
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkslurm-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::permissions(dir_, fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add);  // for munged
    // Reference outputs cached in the test's own directory; each Slurm task adds nodes/<host> to it.
    ::setenv("PKAGENT_CACHE", (dir_ / "cache").c_str(), 1);
    cluster_ = std::make_unique<slurm_cluster>(dir_ / "cluster", 2, 2);
  }
  void TearDown() override {
    if (cluster_ && HasFailure()) std::cerr << cluster_->logs();
    cluster_.reset();  // every job cancelled, every daemon stopped, even when the test failed
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  int pkagent(const std::vector<std::string>& args, std::string* out, const fs::path& cache = {}) {
    const fs::path log = dir_ / fmt::format("cmd-{}.log", ++commands_);
    bp::environment env = boost::this_process::environment();
    if (!cache.empty()) env["PKAGENT_CACHE"] = cache.string();
    bp::child c(bp::exe = std::string(PKAGENT_BIN_DIR) + "/pkagent", bp::args = args, bp::start_dir = dir_.string(),
                env, bp::std_out > log.string(), bp::std_err > log.string() + ".err");
    c.wait();
    *out = read(log) + read(log.string() + ".err");
    return c.exit_code();
  }

  // Submits and returns the array job's id, checking the reply names the shards it submitted.
  std::string submit(const std::vector<std::string>& args, const std::string& shards) {
    std::string text;
    EXPECT_EQ(pkagent(args, &text), 0) << text;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(text, m, std::regex("submitted shard\\(s\\) (\\S+) of \\d+ .* as array job (\\d+), "
                                                      "and merge job (\\d+)")))
        << text;
    if (m.empty()) return "";
    EXPECT_EQ(m[1].str(), shards) << text;
    return m[2].str();
  }

  void wait_for_jobs() {
    ASSERT_TRUE(cluster_->wait_for_empty_queue(600s)) << cluster_->command({"squeue"});
  }

  std::string status(const fs::path& out) {
    std::string text;
    EXPECT_EQ(pkagent({"run", "--status", out.string()}, &text), 0) << text;
    return text;
  }

  fs::path dir_;
  std::unique_ptr<slurm_cluster> cluster_;
  int commands_ = 0;
};

TEST_F(slurm_run_test, FourShardArrayMergesToTheSameResultsAsALocalRun) {
  const fs::path out = dir_ / "sharded", local = dir_ / "local";
  const auto t0 = std::chrono::steady_clock::now();
  submit(zero_shot("1-8", 2) + std::vector<std::string>{"--cpu-slots", "2", "--out", out.string(), "--slurm",
                                                        "--shards", "4", "--slurm-opt=--gres=gpu:1"},
         "0-3");
  wait_for_jobs();
  const double slurm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const auto merged = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(merged.skipped.empty()) << metrics::describe(merged.skipped.at(0));
  ASSERT_EQ(merged.results.size(), 16u) << read(out / "results.jsonl") << status(out);
  for (std::size_t i = 1; i < merged.results.size(); ++i) {
    const auto &a = merged.results[i - 1], &b = merged.results[i];
    EXPECT_LT(std::pair(a.problem_id, a.sample), std::pair(b.problem_id, b.sample)) << "merged lines out of order";
  }
  // Each shard ran its round-robin part of the plan (sample-major order), no more.
  for (int i = 0; i < 4; ++i) {
    const auto got = metrics::read_results(files_of(out, {i, 4}).results).results;
    std::set<std::pair<int, int>> mine, want;
    for (const auto& r : got) mine.insert({r.problem_id, r.sample});
    for (int pos = i; pos < 16; pos += 4) want.insert({pos % 8 + 1, pos / 8});
    EXPECT_EQ(mine, want) << "shard " << i;
  }
  const std::string st = status(out);
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(std::regex_search(st, std::regex(fmt::format("\n{}/4 +done +4/4 ", i)))) << st;

  // The same run here, with the node's reference outputs (same problems, seeds and device): the
  // verdicts are the candidates', computed again.
  std::string text;
  const auto t1 = std::chrono::steady_clock::now();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string node = std::string(host).substr(0, std::string(host).find('.'));
  ASSERT_EQ(pkagent(zero_shot("1-8", 2) + std::vector<std::string>{"--cpu-slots", "4", "--jobs", "2", "--out",
                                                                   local.string()},
                    &text, dir_ / "cache" / "nodes" / node),
            0)
      << text;
  const double local_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  EXPECT_EQ(verdicts(out / "results.jsonl"), verdicts(local / "results.jsonl"));
  ASSERT_EQ(pkagent({"report", local.string()}, &text), 0) << text;
  const auto local_cells = verdict_cells(text);
  EXPECT_EQ(local_cells.size(), 8u) << text;
  EXPECT_EQ(verdict_cells(read(out / "report.md")), local_cells) << read(out / "report.md");

  // The merge depends on the shards' files, not on the order their lines were written in.
  const std::string first = read(out / "results.jsonl");
  for (int i = 0; i < 4; ++i) {
    const fs::path f = files_of(out, {i, 4}).results;
    std::vector<std::string> lines;
    std::istringstream in(read(f));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::ofstream o(f, std::ios::trunc);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) o << *it << '\n';
  }
  ASSERT_EQ(pkagent({"run", "--merge", out.string()}, &text), 0) << text;
  EXPECT_EQ(read(out / "results.jsonl"), first);

  // Figures for docs/slurm.md: Slurm's times per job against the shard's own (state.json).
  std::cout << fmt::format("16 episodes: 4-shard Slurm array {:.1f} s (submission to merge), local --jobs 2 {:.1f} s\n",
                           slurm_s, local_s);
  for (int i = 0; i < 4; ++i) {
    const auto state = read_state(files_of(out, {i, 4}).state);
    if (state) std::cout << fmt::format("shard {}: ran {:.1f} s from {:.1f}\n", i, state->ended - state->started,
                                        state->started);
  }
  std::cout << "finished jobs:\n" << cluster_->finished_jobs();
}

TEST_F(slurm_run_test, CancelledShardIsResubmittedAndRunsOnlyItsMissingEpisodes) {
  const fs::path out = dir_ / "cancelled";
  // Shard 0 holds problem 1's two samples, shard 1 problem 2's.
  const auto args = zero_shot("1-2", 2) + std::vector<std::string>{"--cpu-slots", "2", "--out", out.string(),
                                                                   "--slurm", "--shards", "2"};
  const std::string array = submit(args, "0-1");
  ASSERT_FALSE(array.empty());
  const fs::path victim = files_of(out, {1, 2}).results;
  const auto deadline = std::chrono::steady_clock::now() + 300s;
  while (std::chrono::steady_clock::now() < deadline && !read(victim).size())
    std::this_thread::sleep_for(100ms);
  ASSERT_FALSE(read(victim).empty()) << "shard 1 scored nothing in 300 s\n" << status(out);
  cluster_->command({"scancel", array + "_1"});
  wait_for_jobs();

  const std::string before = read(victim), other = read(files_of(out, {0, 2}).results);
  const std::size_t scored = metrics::read_results(victim).results.size();
  ASSERT_LT(scored, 2u) << "shard 1 finished before the cancel came";
  const std::string st = status(out);
  EXPECT_TRUE(std::regex_search(st, std::regex("1/2 +failed .*ended while running"))) << st;
  const auto lost = metrics::read_results(out / "results.jsonl").results;
  ASSERT_EQ(lost.size(), 4u);
  std::size_t infra = 0;
  for (const auto& r : lost) {
    if (!metrics::is_infrastructure_failure(r)) continue;
    ++infra;
    EXPECT_EQ(r.end_reason, "shard_lost");
  }
  EXPECT_EQ(infra, 2 - scored);
  EXPECT_NE(read(out / "report.md").find("infrastructure failures excluded"), std::string::npos);

  // The same command again: only shard 1 goes back, and it runs only what it had not scored.
  submit(args, "1");
  wait_for_jobs();
  const auto after = metrics::read_results(victim);
  EXPECT_TRUE(after.skipped.empty()) << metrics::describe(after.skipped.at(0));
  EXPECT_EQ(after.results.size(), 2u);
  EXPECT_EQ(read(victim).substr(0, before.size()), before) << "lines scored before the cancel were rewritten";
  EXPECT_EQ(read(files_of(out, {0, 2}).results), other) << "shard 0 ran again";
  const auto merged = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(merged.skipped.empty());
  ASSERT_EQ(merged.results.size(), 4u);
  for (const auto& r : merged.results) EXPECT_EQ(r.verdict, "correct") << r.problem_id << "/" << r.sample;
}

TEST_F(slurm_run_test, ShardThatFailsAtStartIsReportedAndRetried) {
  const fs::path out = dir_ / "blocked";
  // A file where shard 1's directory must go: its task fails before running anything.
  fs::create_directories(out / "shards");
  std::ofstream(out / "shards" / "1-of-2") << "in the way\n";
  const auto args = zero_shot("1-2", 1) + std::vector<std::string>{"--cpu-slots", "2", "--out", out.string(),
                                                                   "--slurm", "--shards", "2"};
  submit(args, "0-1");
  wait_for_jobs();

  const std::string st = status(out);
  EXPECT_TRUE(std::regex_search(st, std::regex("0/2 +done"))) << st;
  EXPECT_TRUE(std::regex_search(st, std::regex("1/2 +failed .*failed at start.*Slurm: FAILED"))) << st;
  const auto first = metrics::read_results(out / "results.jsonl").results;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].verdict, "correct");
  EXPECT_EQ(first[1].verdict, "harness_error");
  EXPECT_EQ(first[1].end_reason, "shard_lost");
  const std::string report = read(out / "report.md");
  EXPECT_TRUE(std::regex_search(report, std::regex("infrastructure failures \\(episodes not run[^|]*\\| +1 \\|")))
      << report;
  EXPECT_TRUE(std::regex_search(report, std::regex("correct \\(per sample\\) +\\| +50\\.0%")));
  EXPECT_TRUE(std::regex_search(report, std::regex("infrastructure failures excluded +\\| +100\\.0%"))) << report;

  fs::remove(out / "shards" / "1-of-2");
  submit(args, "1");
  wait_for_jobs();
  const auto second = metrics::read_results(out / "results.jsonl").results;
  ASSERT_EQ(second.size(), 2u) << status(out);
  for (const auto& r : second) EXPECT_EQ(r.verdict, "correct") << r.problem_id;
  EXPECT_EQ(read(out / "report.md").find("infrastructure failures"), std::string::npos);
}

}  // namespace
}  // namespace pk::run
