// Shards without a cluster: the episode -> shard mapping, the submission's arguments, and the run
// directory as several shards leave it: the ledger's choice per episode, the dollar count, the
// status of each shard and the merge.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "agent/run/run_ledger.h"
#include "agent/run/runner.h"
#include "agent/run/slurm/merge.h"
#include "agent/run/slurm/run_status.h"
#include "agent/run/slurm/shard.h"
#include "agent/run/slurm/slurm_submit.h"
#include "bench/metrics/results_file.h"
#include "bench/suite/suite.h"

namespace pk::run {
namespace {

namespace fs = std::filesystem;

TEST(Shard, ParsesIOfNAndRefusesTheRest) {
  EXPECT_EQ(parse_shard("2/4"), (shard_id{2, 4}));
  EXPECT_EQ(parse_shard("0/1").name(), "0-of-1");
  for (const char* bad : {"4/4", "1/0", "-1/2", "1", "a/b", "1/2/3", "/2"}) {
    try {
      parse_shard(bad);
      FAIL() << bad << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--shard ") + bad), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, RoundRobinOverSampleMajorOrderCoversThePlanOnce) {
  stored_plan plan;
  plan.problems = {1, 2, 3, 5};
  plan.samples = 3;
  std::set<episode_ref> seen;
  std::size_t largest = 0, smallest = 99;
  for (int i = 0; i < 5; ++i) {
    const auto mine = shard_episodes(plan, {i, 5});
    largest = std::max(largest, mine.size());
    smallest = std::min(smallest, mine.size());
    for (const auto& e : mine) EXPECT_TRUE(seen.insert(e).second) << "episode in two shards";
  }
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_LE(largest - smallest, 1u);
  // One shard per problem: each holds every sample of one problem.
  const auto per_problem = shard_episodes(plan, {2, 4});
  EXPECT_EQ(per_problem, (std::vector<episode_ref>{{3, 0}, {3, 1}, {3, 2}}));
  // More samples append episodes; none moves to another shard.
  stored_plan grown = plan;
  grown.samples = 5;
  for (int i = 0; i < 3; ++i) {
    const auto before = shard_episodes(plan, {i, 3}), after = shard_episodes(grown, {i, 3});
    EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin())) << "shard " << i;
  }
}

TEST(SlurmSubmit, ShardTasksGetTheRunArgumentsWithoutTheSubmissionsOwn) {
  EXPECT_EQ(shard_arguments({"--problems", "1-8", "--slurm", "--shards", "4", "--slurm-opt=--gres=gpu:8",
                             "--slurm-opt", "--exclusive", "--slurm-merge-opt=-p", "--shards=4", "--out", "r"}),
            (std::vector<std::string>{"--problems", "1-8", "--out", "r"}));
  EXPECT_EQ(placement_options({"--gres=gpu:8", "--partition=gpu", "-A", "lab", "--exclusive", "--qos=high",
                               "--time=04:00:00"}),
            (std::vector<std::string>{"--partition=gpu", "-A", "lab", "--qos=high"}));
}

// A run directory with run.json, as two shards leave it.
class ShardedRunDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pkshard-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    o_.out = fs::path(tmpl) / "run";
    o_.mode = metrics::run_mode::zeroshot;
    o_.device = bench::device_kind::cpu;
    o_.problems = {1, 2};
    o_.samples = 2;
    run_id_ = open_run_dir(o_);
    suite_ = bench::load_suite(bench::default_suite_dir());
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(o_.out.parent_path());
  }

  metrics::episode_result result(int problem, int sample, const std::string& verdict = "correct") {
    const auto& p = bench::find_problem(suite_, std::to_string(problem));
    metrics::episode_result r;
    r.run_id = run_id_;
    r.mode = o_.mode;
    r.model = "demo";
    r.problem_id = p.id;
    r.stem = p.stem;
    r.problem_category = *metrics::parse_category(p.category);
    r.sample = sample;
    r.verdict = verdict;
    r.correct = verdict == "correct";
    r.dollars = 0.25;
    r.device = o_.device;
    r.end_reason = "submitted";
    return r;
  }
  void add(shard_id s, const metrics::episode_result& r) {
    fs::create_directories(files_of(o_.out, s).dir);
    metrics::append_result(files_of(o_.out, s).results, r);
  }
  void state(shard_id s, const std::string& what) {
    shard_state st;
    st.state = what;
    st.host = "elsewhere";
    fs::create_directories(files_of(o_.out, s).dir);
    write_state(files_of(o_.out, s).state, st);
  }
  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  run_options o_;
  std::string run_id_;
  std::vector<bench::problem> suite_;
};

TEST_F(ShardedRunDir, LedgerPrefersARealResultAndChoosesTheSameWhateverTheOrder) {
  // Plan order (1,0) (2,0) (1,1) (2,1): shard 0 of 2 holds problem 1, shard 1 problem 2.
  auto failure = result(1, 0, "harness_error");
  failure.end_reason = "harness_error";
  add({0, 2}, failure);
  add({0, 2}, result(1, 0));
  // Scored twice, by shards of two submissions: the choice must not depend on which file came first.
  auto twice = result(2, 0);
  twice.wall_seconds = 9;
  add({1, 2}, twice);
  add({0, 1}, result(2, 0));
  const auto l = read_ledger(o_.out, run_id_);
  ASSERT_EQ(l.results.size(), 2u);
  EXPECT_EQ(l.results.at({1, 0}).verdict, "correct");
  EXPECT_EQ(l.results.at({2, 0}).wall_seconds, 0);
  EXPECT_DOUBLE_EQ(run_dollars(o_.out, run_id_), 0.5);

  // An episode without a result counts what its transcript says the model cost.
  const fs::path ep = o_.out / "episodes" / "2_x" / "sample-1";
  fs::create_directories(ep);
  std::ofstream(ep / "transcript.jsonl")
      << R"({"type":"response","step":1,"response":{"tokens":{"input":100,"output":20},"cost_usd":0.125}})" << "\n";
  EXPECT_DOUBLE_EQ(run_dollars(o_.out, run_id_), 0.625);
}

TEST_F(ShardedRunDir, NoEpisodeStartsOnceTheRunsDollarsAreSpent) {
  // One episode scored by a shard spent $0.25; the run may spend $0.20: nothing more starts.
  add({0, 2}, result(1, 0));
  run_options o = o_;
  o.model = "demo";
  o.max_dollars = 0.2;
  o.quiet = true;
  scheduler::gpu_scheduler slots({0, 1});
  const run_summary s = runner(o, slots).run();
  EXPECT_EQ(s.episodes, 4);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.unstarted, 3);
  EXPECT_EQ(s.finished + s.failed, 0);
  EXPECT_FALSE(fs::exists(o.out / "episodes" / "2_allgather"));
}

TEST_F(ShardedRunDir, MergeIsOrderedMarksTheLostAndDependsOnlyOnTheFiles) {
  add({0, 2}, result(1, 1, "mismatch"));
  add({0, 2}, result(1, 0));
  state({0, 2}, "finished");
  add({1, 2}, result(2, 0));
  state({1, 2}, "failed");  // it threw before scoring (2, 1)
  const run_status st = read_status(o_.out);
  ASSERT_EQ(st.shard_count, 2);
  EXPECT_EQ(st.shards[0].phase, shard_phase::done);
  EXPECT_EQ(st.shards[1].phase, shard_phase::failed);
  EXPECT_TRUE(st.shards[1].lost);
  const merge_summary m = merge_run(o_.out, st, suite_);
  EXPECT_EQ(m.scored, 3);
  EXPECT_EQ(m.infrastructure, 1);
  const auto merged = metrics::read_results(o_.out / "results.jsonl").results;
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(std::pair(merged[0].problem_id, merged[0].sample), std::pair(1, 0));
  EXPECT_EQ(std::pair(merged[3].problem_id, merged[3].sample), std::pair(2, 1));
  EXPECT_EQ(merged[3].verdict, "harness_error");
  EXPECT_EQ(merged[3].end_reason, "shard_lost");
  EXPECT_NE(read(o_.out / "report.md").find("infrastructure failures excluded"), std::string::npos);

  // The same lines written in another order merge to the same bytes.
  const std::string first = read(o_.out / "results.jsonl");
  fs::remove(files_of(o_.out, {0, 2}).results);
  add({0, 2}, result(1, 0));
  add({0, 2}, result(1, 1, "mismatch"));
  merge_run(o_.out, read_status(o_.out), suite_);
  EXPECT_EQ(read(o_.out / "results.jsonl"), first);

  // A shard still running (started by hand on another host) loses nothing yet.
  state({1, 2}, "running");
  const run_status later = read_status(o_.out);
  EXPECT_EQ(later.shards[1].phase, shard_phase::running);
  EXPECT_EQ(merge_run(o_.out, later, suite_).waiting, 0);  // the earlier merge's line stands until retried
}

}  // namespace
}  // namespace pk::run
