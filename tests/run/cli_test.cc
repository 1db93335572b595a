// `pkagent run` end to end on CPU (gloo) against the fake provider on loopback: a zero-shot run
// and an agent run over problems 1-4, the agent run killed with SIGKILL mid-way and resumed, and
// `pkagent report` on the result.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <boost/process.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/transcript.h"
#include "config/read_file.h"
#include "bench/metrics/results_file.h"
#include "fake_provider.h"
#include "lease_check.h"
#include "sandbox/gpu_devices.h"
#include "sandbox/sandbox.h"

namespace pk::run {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;
using json = nlohmann::json;

constexpr const char* key_var = "PK_RUN_TEST_KEY";

// A correct all-reduce, and only that: right for problem 1, wrong for the others.
constexpr const char* allreduce_reply =
    "Plan: reduce a copy in place.\n\n```python\nimport torch\nimport torch.distributed as dist\n\n\n"
    "def solution(tensor):\n    out = tensor.clone()\n    dist.all_reduce(out)\n    return out\n```\n";

json tool_reply(const std::string& command, double delay_s = 0) {
  json r = {{"text", ""}, {"usage", {{"input", 1000}, {"output", 100}}}};
  r["tool_calls"] = {command == "submit" ? json{{"name", "submit"}, {"arguments", json::object()}}
                                         : json{{"name", "bash"}, {"arguments", {{"command", command}}}}};
  if (delay_s > 0) r["delay_s"] = delay_s;
  return r;
}

class run_cli_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkrun-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv(key_var, "sk-run-test-0123456789abcdef", 1);
    models_ = dir_ / "models.toml";
    std::ofstream(models_) << fmt::format(R"([models.fake]
provider = "openai-chat"
base_url = "{}"
model = "fake-model"
api_key_env = "{}"
price = {{ input = 2.0, output = 10.0 }}
retry = {{ max_retries = 0 }}
)", fake_.base_url(), key_var);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::vector<std::string> run_args(const std::string& mode, const fs::path& out) const {
    return {"run", "--mode", mode, "--model", "fake", "--models", models_.string(), "--problems", "1-4",
            "--device", "cpu", "--trials", "2", "--check-trials", "1", "--out", out.string()};
  }

  static bp::child start(const std::vector<std::string>& args, const fs::path& log) {
    return bp::child(bp::exe = std::string(PKAGENT_BIN_DIR) + "/pkagent", bp::args = args,
                     bp::std_out > log.string(), bp::std_err > log.string() + ".err");
  }

  int pkagent(const std::vector<std::string>& args, std::string* out) {
    const fs::path log = dir_ / fmt::format("cmd-{}.log", ++commands_);
    bp::child c = start(args, log);
    c.wait();
    *out = read_file(log) + read_file(log.string() + ".err");
    return c.exit_code();
  }

  testkit::fake_provider fake_;
  fs::path dir_, models_;
  int commands_ = 0;
};

TEST_F(run_cli_test, ZeroShotOverProblems1To4IsScoredAndReported) {
  json replies = json::array();
  for (int i = 0; i < 4; ++i) replies.push_back({{"text", allreduce_reply}, {"usage", {{"input", 2000}, {"output", 300}}}});
  fake_.load({{"replies", replies}});
  const fs::path out = dir_ / "zs";
  std::string text;
  ASSERT_EQ(pkagent([&] { auto a = run_args("zeroshot", out); a.insert(a.end(), {"--jobs", "2"}); return a; }(), &text), 0)
      << text;
  const auto got = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(got.skipped.empty());
  ASSERT_EQ(got.results.size(), 4u) << text;
  for (const auto& r : got.results) {
    EXPECT_EQ(r.mode, metrics::run_mode::zeroshot);
    EXPECT_EQ(r.model, "fake");
    EXPECT_EQ(r.tokens_in, 2000);
    EXPECT_EQ(r.tokens_out, 300);
    EXPECT_NEAR(r.dollars, (2000 * 2.0 + 300 * 10.0) / 1e6, 1e-9);
    EXPECT_EQ(r.correct, r.problem_id == 1) << r.problem_id << ": " << r.verdict;
    if (r.problem_id == 1) {
      ASSERT_TRUE(r.speedup.has_value());
      ASSERT_TRUE(r.timings.has_value());
      EXPECT_EQ(r.timings->trials, 2);
    } else {
      EXPECT_NE(r.verdict, "correct");
    }
    EXPECT_TRUE(fs::exists(out / r.transcript)) << r.transcript;
    const fs::path solution = out / fs::path(r.transcript).parent_path() / "workspace" / "solution.py";
    EXPECT_NE(read_file(solution).find("dist.all_reduce(out)"), std::string::npos);
    EXPECT_EQ(read_file(solution).find("```"), std::string::npos) << "the fence must not reach the solution";
  }
  // Every problem's task text reached the model, hidden seeds did not.
  const json reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (const json& q : reqs) {
    const std::string body = q["body"].dump();
    EXPECT_NE(body.find("def solution("), std::string::npos);
    EXPECT_EQ(body.find("7000003"), std::string::npos);
  }
  // A rerun finds everything scored and asks the model nothing.
  fake_.load({{"replies", json::array()}});
  ASSERT_EQ(pkagent(run_args("zeroshot", out), &text), 0) << text;
  EXPECT_NE(text.find("4 scored before"), std::string::npos) << text;
  EXPECT_TRUE(fake_.requests().empty());
  EXPECT_EQ(metrics::read_results(out / "results.jsonl").results.size(), 4u);

  ASSERT_EQ(pkagent({"report", out.string()}, &text), 0) << text;
  EXPECT_NE(text.find("allreduce"), std::string::npos) << text;
}

TEST_F(run_cli_test, AgentRunSurvivesKill9AndResumes) {
  // Each episode: copy the reference in place and check it with pkb, then submit. Replies come
  // slowly so that the kill lands mid-run.
  json replies = json::array();
  for (int i = 0; i < 6; ++i) {
    replies.push_back(tool_reply("cp reference.py solution.py && pkb check", 0.5));
    replies.push_back(tool_reply("submit", 0.5));
  }
  fake_.load({{"replies", replies}});
  const fs::path out = dir_ / "agent";
  const fs::path log = dir_ / "first.log";
  bp::child first = start(run_args("agent", out), log);
  // Kill once the first episode is scored and the second has started.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline && first.running()) {
    if (fs::exists(out / "episodes" / "2_allgather" / "sample-0" / "transcript.jsonl") &&
        fs::exists(out / "results.jsonl"))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(first.running()) << "the run ended before it could be killed:\n" << read_file(log) << read_file(log.string() + ".err");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(first.id(), SIGKILL);
  first.wait();
  const std::size_t before = metrics::read_results(out / "results.jsonl").results.size();
  EXPECT_GE(before, 1u);
  EXPECT_LT(before, 4u);

  // The fake provider's queue is shared by every request: a reply popped by the killed process
  // but never recorded would shift it, so the rerun gets a fresh queue of (copy, submit) pairs.
  fake_.load({{"replies", replies}});
  std::string text;
  ASSERT_EQ(pkagent(run_args("agent", out), &text), 0) << text;
  EXPECT_NE(text.find(fmt::format("{} scored before", before)), std::string::npos) << text;
  // A line per step, with the episode's own tokens and dollars: 2 replies of 1000 + 100 tokens.
  EXPECT_NE(text.find("bash: cp reference.py solution.py && pkb check -> exit 0"), std::string::npos) << text;
  EXPECT_NE(text.find("| 2200 tokens $0.0060"), std::string::npos) << text;
  const auto read_back = metrics::read_results(out / "results.jsonl");
  EXPECT_TRUE(read_back.skipped.empty()) << metrics::describe(read_back.skipped.at(0));
  ASSERT_EQ(read_back.results.size(), 4u);
  std::set<int> problems;
  for (const auto& r : read_back.results) {
    problems.insert(r.problem_id);
    EXPECT_TRUE(r.correct) << r.problem_id << ": " << r.verdict << " (" << r.end_reason << ")";
    EXPECT_EQ(r.end_reason, "submitted");
    EXPECT_GT(r.gpu_seconds, 0);
    // The transcript is whole: steps 1..n, each once, ending in an outcome.
    const agent::transcript_file t = agent::read_transcript(out / r.transcript);
    EXPECT_TRUE(t.finished()) << r.transcript;
    EXPECT_TRUE(t.problems.empty()) << r.transcript;
    EXPECT_EQ(t.complete_steps(), static_cast<int>(t.steps.size()));
    // pkb check ran with a lease and passed on the visible inputs.
    const std::string pkb_log = read_file(out / fs::path(r.transcript).parent_path() / "pkb.jsonl");
    EXPECT_NE(pkb_log.find("\"verdict\":\"correct\""), std::string::npos) << pkb_log;
  }
  EXPECT_EQ(problems, (std::set<int>{1, 2, 3, 4}));

  ASSERT_EQ(pkagent({"report", out.string()}, &text), 0) << text;
  EXPECT_NE(text.find("reduce"), std::string::npos) << text;
}

// Leases on CPU: a simulated 4-GPU host (--cpu-slots 4) runs two world-2 final scorings side by
// side; the run's lease log shows them overlapping on disjoint slots and never on a shared one.
TEST_F(run_cli_test, SimulatedFourGpuHostRunsTwoWorldTwoLeasesAtOnce) {
  const fs::path out = dir_ / "host4";
  std::string text;
  ASSERT_EQ(pkagent({"run", "--mode", "zeroshot", "--model", "demo", "--problems", "1-4", "--device", "cpu",
                     "--cpu-slots", "4", "--jobs", "4", "--trials", "1", "--no-perf", "--out", out.string()},
                    &text), 0) << text;
  const auto got = metrics::read_results(out / "results.jsonl");
  ASSERT_EQ(got.results.size(), 4u) << text;
  for (const auto& r : got.results) {
    EXPECT_EQ(r.verdict, "correct") << r.problem_id;  // the demo answers with the reference
    EXPECT_TRUE(agent::read_transcript(out / r.transcript).finished()) << r.transcript;
  }
  const auto pairs = test_support::read_lease_pairs(out / "leases.jsonl");
  EXPECT_EQ(pairs.leases.size(), 4u);
  EXPECT_TRUE(pairs.clashes.empty()) << pairs.clashes.at(0);
  EXPECT_GE(pairs.side_by_side, 1) << "no two world-2 leases ran at once on the 4 slots";
  // --cpu-slots is for CPU runs only, and must hold one world.
  EXPECT_EQ(pkagent({"run", "--problems", "1", "--device", "cpu", "--cpu-slots", "1", "--out",
                     (dir_ / "bad").string()}, &text), 2);
  EXPECT_NE(text.find("--cpu-slots 1 is fewer than --world 2"), std::string::npos) << text;
}

// The demo's agent episode on CPU, replayed: the kept steps run `pkb check`, `pkb bench` and `pkb
// submit` again against the same problem (the pkb tool attached, not "command not found"), and
// every observation is reproduced, measured figures aside. A fork continues with the tool too.
TEST_F(run_cli_test, ADemoAgentEpisodeReplaysAndForksWithItsPkbTool) {
  const fs::path out = dir_ / "demo";
  std::string text;
  ASSERT_EQ(pkagent({"run", "--mode", "agent", "--model", "demo", "--problems", "1", "--device", "cpu", "--trials",
                     "1", "--check-trials", "1", "--no-perf", "--out", out.string(), "-q"}, &text), 0) << text;
  EXPECT_EQ(text.find("1_allreduce/sample-0  bash:"), std::string::npos) << "-q prints no progress lines:\n" << text;
  EXPECT_NE(text.find("ended: submitted 1"), std::string::npos) << "the summary stays:\n" << text;
  const fs::path episode = out / "episodes" / "1_allreduce" / "sample-0";
  const agent::transcript_file recorded = agent::read_transcript(episode / "transcript.jsonl");
  ASSERT_EQ(recorded.complete_steps(), 4) << text;
  EXPECT_EQ(recorded.header["tools"]["pkb"]["problem"], "1_allreduce");
  EXPECT_EQ(recorded.header["tools"]["pkb"]["device"], "cpu");

  ASSERT_EQ(pkagent({"replay", episode.string()}, &text), 0) << text;
  EXPECT_NE(text.find("pkb tool attached: problem 1_allreduce, world 2, on cpu"), std::string::npos) << text;
  EXPECT_EQ(text.find("DIFFERS"), std::string::npos) << text;
  EXPECT_EQ(text.find("not re-executed"), std::string::npos) << text;
  EXPECT_EQ(text.find("command not found"), std::string::npos) << text;
  for (int step = 1; step <= 3; ++step)
    EXPECT_TRUE(text.find(fmt::format("step {:>3}: identical", step)) != std::string::npos ||
                text.find(fmt::format("step {:>3}: differs only in measured figures", step)) != std::string::npos)
        << step << ":\n" << text;
  EXPECT_NE(text.find("outcome then: submitted, verdict correct (final scoring on hidden inputs)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("outcome now:  submitted, not scored again"), std::string::npos) << text;

  // A transcript written before headers named their tools is known by its task directory; a fork of
  // it keeps step 1 (the reference copied in) and goes on live with pkb.
  std::string old_format;
  for (json e : recorded.events) {
    if (e["type"] == "header") e.erase("tools");
    old_format += e.dump() + "\n";
  }
  fs::create_directories(dir_ / "old");
  std::ofstream(dir_ / "old" / "transcript.jsonl") << old_format;
  fake_.load({{"replies", {tool_reply("pkb check"), tool_reply("submit")}}});
  const fs::path fork = dir_ / "fork";
  ASSERT_EQ(pkagent({"replay", (dir_ / "old").string(), "--from-step", "1", "--model", "fake", "--models",
                     models_.string(), "--out", fork.string(), "-q"}, &text), 0) << text;
  const agent::transcript_file forked = agent::read_transcript(fork / "transcript.jsonl");
  ASSERT_EQ(forked.complete_steps(), 3);
  const std::string check = forked.steps.at(2).observation.value("text", "");
  EXPECT_NE(check.find("verdict: correct"), std::string::npos) << check;
  EXPECT_EQ(forked.steps.at(2).observation["exit_code"], 0);
  EXPECT_EQ(forked.header["tools"]["pkb"]["problem"], "1_allreduce");
  EXPECT_TRUE(fs::exists(fork / "pkb.jsonl"));

  // Where the commands cannot re-execute, the replay refuses and says why.
  if (sandbox::host_gpu_indices().empty()) {
    EXPECT_EQ(pkagent({"replay", episode.string(), "--device", "cuda"}, &text), 2) << text;
    EXPECT_NE(text.find("this host has no NVIDIA GPU"), std::string::npos) << text;
    EXPECT_NE(text.find("--device cpu"), std::string::npos) << text;
  }
}

// What the runner scores as nothing submitted, how each episode ended, and the progress a program
// reads: a zero-shot reply without code and one cut at the output limit, and an agent episode that
// submits the untouched stub.
TEST_F(run_cli_test, NothingSubmittedIsNoSubmissionAndEveryEndReasonIsShown) {
  fake_.load({{"replies", {{{"text", "All-reduce is best left to NCCL; I would not write a kernel."}},
                           {{"text", "```python\nimport torch\n\ndef solution(tensor):\n    return ten"},
                            {"finish", "length"}, {"usage", {{"input", 900}, {"output", 4096}}}}}}});
  const fs::path zs = dir_ / "zs";
  std::string text;
  auto args = run_args("zeroshot", zs);
  args[args.size() - 9] = "1-2";  // --problems 1-2
  ASSERT_EQ(pkagent(args, &text), 0) << text;
  EXPECT_NE(text.find("ended: no_code_block 1, output_token_limit 1"), std::string::npos) << text;
  auto got = metrics::read_results(zs / "results.jsonl").results;
  ASSERT_EQ(got.size(), 2u) << text;
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.problem_id < b.problem_id; });
  EXPECT_EQ(got[0].verdict, "no_submission");
  EXPECT_EQ(got[0].end_reason, "no_code_block");
  EXPECT_FALSE(got[0].correct);
  EXPECT_FALSE(fs::exists(zs / "episodes" / "1_allreduce" / "sample-0" / "final_eval.json")) << "nothing was judged";
  EXPECT_NE(got[1].verdict, "no_submission") << "the cut reply's code is judged";
  EXPECT_EQ(got[1].end_reason, "output_token_limit");

  // An agent episode that submits the stub as it found it; progress as JSON lines.
  fake_.load({{"replies", {tool_reply("submit")}}});
  const fs::path agent_run = dir_ / "agent-stub";
  args = run_args("agent", agent_run);
  args[args.size() - 9] = "1";
  args.insert(args.end(), {"--progress", "json"});
  ASSERT_EQ(pkagent(args, &text), 0) << text;
  EXPECT_NE(text.find("ended: submitted 1"), std::string::npos) << text;
  got = metrics::read_results(agent_run / "results.jsonl").results;
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].verdict, "no_submission");
  EXPECT_EQ(got[0].end_reason, "submitted");
  std::map<std::string, json> last;
  std::istringstream lines(read_file(dir_ / fmt::format("cmd-{}.log.err", commands_)));
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line, nullptr, false);
    if (e.is_object() && e.contains("event")) last[e["event"]] = e;
  }
  ASSERT_TRUE(last.count("step")) << text;
  EXPECT_EQ(last["step"]["action"], "submit");
  EXPECT_EQ(last["step"]["tokens"], 1100) << "the episode's own tokens";
  EXPECT_NEAR(last["step"]["dollars"].get<double>(), (1000 * 2.0 + 100 * 10.0) / 1e6, 1e-12);
  ASSERT_TRUE(last.count("done"));
  EXPECT_EQ(last["done"]["verdict"], "no_submission");
  EXPECT_EQ(last["done"]["end_reason"], "submitted");
  EXPECT_EQ(last["done"]["tokens"], 1100);
  EXPECT_EQ(last["status"]["tokens"], 1100);

  ASSERT_EQ(pkagent({"report", zs.string(), agent_run.string()}, &text), 0) << text;
  EXPECT_NE(text.find("no_code_block 1"), std::string::npos) << text;
  EXPECT_NE(text.find("no_submission 1"), std::string::npos) << text;
  EXPECT_NE(text.find("episodes ended by (end reasons)"), std::string::npos) << text;
}

TEST_F(run_cli_test, ARunWhoseEveryEpisodeHitAModelErrorFailsAsTheProvidersFault) {
  // A refused key: no episode learns anything, so the run is no success a script can go on from.
  fake_.load({{"replies", {{{"fault", "status"}, {"status", 401}, {"message", "bad key"}}}}});
  const fs::path out = dir_ / "refused";
  std::string text;
  auto args = run_args("zeroshot", out);
  args[args.size() - 9] = "1";  // --problems 1
  EXPECT_EQ(pkagent(args, &text), 3) << text;
  EXPECT_NE(text.find("ended: model_error 1"), std::string::npos) << text;
  EXPECT_NE(text.find("every episode scored now ended in model_error"), std::string::npos) << text;
  const auto got = metrics::read_results(out / "results.jsonl").results;
  ASSERT_EQ(got.size(), 1u) << "the episode is recorded all the same";
  EXPECT_EQ(got[0].end_reason, "model_error");
}

TEST_F(run_cli_test, BadOptionsAreRefusedClearly) {
  std::string text;
  EXPECT_EQ(pkagent({"run", "--problems", "1-x", "--device", "cpu", "--out", (dir_ / "bad").string()}, &text), 2);
  EXPECT_NE(text.find("'x' is not a problem id"), std::string::npos) << text;
  // A directory holding another run is not silently mixed with this one.
  fake_.load({{"replies", json::array({{{"text", allreduce_reply}}}) }});
  const fs::path out = dir_ / "mixed";
  auto args = run_args("zeroshot", out);
  args[args.size() - 9] = "1";  // --problems 1
  ASSERT_EQ(pkagent(args, &text), 0) << text;
  args[2] = "agent";
  EXPECT_EQ(pkagent(args, &text), 2);
  EXPECT_NE(text.find("mode = \"zeroshot\""), std::string::npos) << text;
}

}  // namespace
}  // namespace pk::run
