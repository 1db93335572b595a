// The pkb server over its real Unix socket with the real client binary and the real sandbox, and
// its use of the GPU scheduler: leases only for the duration of a request, none while the
// episode waits for its model, GPU-second caps enforced.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/process.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/episode_dir.h"
#include "agent/model_choice.h"
#include "agent/run/pkb_binding.h"
#include "agent/run/pkb_tool/server.h"
#include "bench/suite/suite.h"
#include "config/paths.h"
#include "fake_provider.h"

namespace pk::run {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;
using json = nlohmann::json;

class pkb_server_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "the sandbox cannot run here: " << *why;
    char tmpl[] = "/tmp/pkb-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "workspace");
    std::ofstream(dir_ / "workspace" / "note.txt") << "hello from the workspace\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  pkb::context context(scheduler::gpu_scheduler& gpus, std::optional<double> cap = std::nullopt) {
    static const auto suite = bench::load_suite(bench::default_suite_dir());
    pkb::context c;
    c.problem = bench::find_problem(suite, "1");
    c.eval.world = 2;
    c.eval.device = bench::device_kind::cpu;
    c.workspace = dir_ / "workspace";
    c.gpus = &gpus;
    c.holder = gpus.add_holder("test-episode", cap);
    c.command_timeout_s = 30;
    c.log = dir_ / "pkb.jsonl";
    return c;
  }

  // Runs the real client against `socket` and returns {exit code, stdout + stderr}.
  static std::pair<int, std::string> pkb(const fs::path& socket, const std::vector<std::string>& args) {
    bp::ipstream out;
    auto env = boost::this_process::environment();
    env["PKB_SOCKET"] = socket.string();
    bp::child c(bp::exe = std::string(PKAGENT_BIN_DIR) + "/pkb", bp::args = args, env,
                (bp::std_out & bp::std_err) > out);
    std::string all, line;
    while (std::getline(out, line)) all += line + "\n";
    c.wait();
    return {c.exit_code(), all};
  }

  std::vector<json> log_lines() const {
    std::vector<json> lines;
    std::ifstream in(dir_ / "pkb.jsonl");
    for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
    return lines;
  }

  fs::path dir_;
};

TEST_F(pkb_server_test, HelpUnknownAndBadArguments) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::context ctx = context(gpus);
  const scheduler::holder who = ctx.holder;
  pkb::server srv(ctx, dir_ / "sock");
  auto [code, out] = pkb(srv.socket_path(), {"help"});
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("usage: pkb COMMAND"), std::string::npos) << out;
  std::tie(code, out) = pkb(srv.socket_path(), {"frobnicate"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("unknown command 'frobnicate'"), std::string::npos) << out;
  std::tie(code, out) = pkb(srv.socket_path(), {"check", "extra"});
  EXPECT_EQ(code, 2);
  std::tie(code, out) = pkb(srv.socket_path(), {"run"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("give the command after --"), std::string::npos) << out;
  // None of these needed a GPU.
  EXPECT_EQ(gpus.usage_of(who).leases, 0);
  EXPECT_EQ(srv.requests(), 4);
}

TEST_F(pkb_server_test, ClientWithoutServerSaysWhere) {
  auto [code, out] = pkb(dir_ / "nothing-here.sock", {"check"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("works only inside a pkagent episode"), std::string::npos) << out;
}

TEST_F(pkb_server_test, RunTakesAShellLineOrAnArgv) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::server srv(context(gpus), dir_ / "sock");
  std::ofstream(dir_ / "workspace" / "a file with spaces") << "spaced\n";
  auto [code, out] = pkb(srv.socket_path(), {"run", "--", "cat", "a file with spaces"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("spaced"), std::string::npos) << out;
  // Several words: no shell in between (a shell would have set SHLVL).
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "printenv", "SHLVL"});
  EXPECT_EQ(code, 1) << out;
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "no-such-program-pk", "x"});
  EXPECT_EQ(code, 127) << out;
  // One word is a shell line.
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "echo one && echo two"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("one\ntwo\n"), std::string::npos) << out;
}

TEST_F(pkb_server_test, RunLeasesForTheCommandOnly) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::context ctx = context(gpus);
  const scheduler::holder who = ctx.holder;
  pkb::server srv(ctx, dir_ / "sock");
  auto [code, out] = pkb(srv.socket_path(), {"run", "--", "cat", "note.txt"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("hello from the workspace"), std::string::npos) << out;
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(code, 7) << out;
  EXPECT_EQ(gpus.free_gpus(), 2);  // nothing outlives a request
  EXPECT_EQ(gpus.usage_of(who).leases, 2);
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  for (const json& l : lines) {
    EXPECT_EQ(l["command"], "run");
    EXPECT_LE(l["lease_start"].get<double>(), l["lease_end"].get<double>());
    EXPECT_EQ(l["gpus"].size(), 2u);
  }
  EXPECT_EQ(lines[1]["exit"], 7);
}

TEST_F(pkb_server_test, SpentBudgetIsRefusedWithAMessage) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::server srv(context(gpus, /*cap=*/0.0), dir_ / "sock");
  auto [code, out] = pkb(srv.socket_path(), {"run", "--", "true"});
  EXPECT_EQ(code, 3);
  EXPECT_NE(out.find("GPU budget is spent"), std::string::npos) << out;
  EXPECT_EQ(log_lines().at(0)["refused"], "over_cap");
}

// Multicast in the workspace is refused before the command runs; unchanged copies of the task's
// own files (whose docs name the forbidden instructions) are not held against the agent.
TEST_F(pkb_server_test, RunRefusesMulticastInTheWorkspace) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::context ctx = context(gpus);
  ctx.task_dir = dir_ / "task";
  fs::create_directories(ctx.task_dir);
  const std::string doc = "Never use multimem.ld_reduce or cuMulticastCreate here.\n";
  std::ofstream(ctx.task_dir / "PROBLEM.md") << doc;
  std::ofstream(dir_ / "workspace" / "PROBLEM.md") << doc;
  pkb::server srv(ctx, dir_ / "sock");
  auto [code, out] = pkb(srv.socket_path(), {"run", "--", "touch", "ran-1"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(fs::exists(dir_ / "workspace" / "ran-1"));

  std::ofstream(dir_ / "workspace" / "kernel.cu")
      << "__global__ void k(float* p) { asm volatile(\"multimem.ld_reduce.global.add.f32 %0, [%1];\" ::); }\n";
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "touch", "ran-2"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("refused, nothing was run"), std::string::npos) << out;
  EXPECT_NE(out.find("kernel.cu"), std::string::npos) << out;
  EXPECT_EQ(out.find("PROBLEM.md"), std::string::npos) << "the task's unchanged file is not blamed:\n" << out;
  EXPECT_FALSE(fs::exists(dir_ / "workspace" / "ran-2"));
  EXPECT_EQ(gpus.free_gpus(), 2);
  EXPECT_EQ(log_lines().at(1)["refused"], "multicast");

  // An edited copy of a task file is the agent's own and is scanned.
  fs::remove(dir_ / "workspace" / "kernel.cu");
  std::ofstream(dir_ / "workspace" / "PROBLEM.md", std::ios::app) << "cuMulticastCreate(&h, &prop);\n";
  std::tie(code, out) = pkb(srv.socket_path(), {"run", "--", "true"});
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("PROBLEM.md"), std::string::npos) << out;
}

TEST_F(pkb_server_test, ProfileWithoutGpuSaysSo) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::server srv(context(gpus), dir_ / "sock");
  auto [code, out] = pkb(srv.socket_path(), {"profile"});
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("no GPU to profile"), std::string::npos) << out;
}

// A whole agent episode whose commands call pkb inside the real sandbox: while the episode waits
// for its (slow) model no lease exists, and each pkb command held one while it ran.
TEST_F(pkb_server_test, NoLeaseWhileTheEpisodeWaitsForTheModel) {
  auto gpus = scheduler::gpu_scheduler::simulated(2);
  pkb::context ctx = context(gpus);
  const scheduler::holder who = ctx.holder;
  pkb::server srv(ctx, dir_ / "sock");

  testkit::fake_provider fake;
  json replies = json::array();
  for (const char* cmd : {"pkb run -- sleep 0.3", "pkb run -- cat note.txt", "pkb help"})
    replies.push_back({{"text", ""}, {"tool_calls", {{{"name", "bash"}, {"arguments", {{"command", cmd}}}}}},
                       {"delay_s", 0.6}, {"usage", {{"input", 10}, {"output", 5}}}});
  replies.push_back({{"text", ""}, {"tool_calls", {{{"name", "submit"}, {"arguments", json::object()}}}},
                     {"delay_s", 0.6}});
  fake.load({{"replies", replies}});
  agent::chosen_model m = agent::choose_model(fmt::format("openai-compatible:{}#fake", fake.base_url()),
                                              config::data_path("config/models.toml"));

  agent::episode_options o;
  o.cfg.limits.command_timeout_seconds = 30;
  o.prompts = agent::prompt_set::load(config::data_path("prompts"));
  o.model = m.config;
  attach_pkb(o.sandbox, srv, fs::path(PKAGENT_BIN_DIR) / "pkb");
  std::atomic<bool> waiting{false}, stop{false};
  std::atomic<int> samples{0}, violations{0};
  std::vector<std::string> outputs;
  o.on_event = [&](const json& e) {
    if (e["type"] == "request") waiting = true;
    if (e["type"] == "response") waiting = false;
    if (e["type"] == "observation" && e.contains("stdout")) outputs.push_back(e["stdout"]["text"]);
  };
  std::jthread sampler([&] {
    while (!stop) {
      if (waiting) {
        ++samples;
        if (gpus.free_gpus() != gpus.gpu_count()) ++violations;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  agent::task_spec task{"pkb-test", "Use pkb.", dir_ / "workspace", {}};
  const agent::episode_result r = agent::start_episode(task, o, m.client.get(), dir_ / "episode");
  stop = true;
  sampler.join();
  EXPECT_EQ(r.reason, agent::end_reason::submitted) << r.message;
  EXPECT_GT(samples.load(), 100) << "the sampler never saw the episode wait for its model";
  EXPECT_EQ(violations.load(), 0) << "a lease was held while the episode waited for the model";
  // pkb run and cat leased; help did not.
  EXPECT_EQ(gpus.usage_of(who).leases, 2);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_NE(outputs[1].find("hello from the workspace"), std::string::npos) << outputs[1];
  EXPECT_NE(outputs[2].find("usage: pkb COMMAND"), std::string::npos) << outputs[2];
}

}  // namespace
}  // namespace pk::run
