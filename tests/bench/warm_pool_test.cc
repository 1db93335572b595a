// Warm rank sets (bench/eval/sets/warm_pool.h) on CPU, through `pkagent eval` with several solutions: each
// evaluation after the first takes ranks started while the one before was judged. A candidate that
// marks its interpreter's globals, monkeypatches torch, and leaves a thread and a child behind has no
// effect on the candidate judged after it, and its child does not outlive its evaluation. No set,
// warm or busy, outlives a pkagent that is killed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/eval/evaluate.h"
#include "bench/eval/sets/warm_pool.h"
#include "eval_runner.h"
#include "sandbox/sandbox.h"

namespace pk::bench {
namespace {

using testing::run_pkagent;
using testing::source_root;
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

// A process as /proc names it: its pid with its start time (pids are reused), its parent and state.
struct proc_entry {
  int pid = 0, ppid = 0;
  unsigned long long start = 0;
  char state = '?';
};

std::map<int, proc_entry> processes() {
  std::map<int, proc_entry> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    proc_entry p;
    p.pid = std::stoi(name);
    rest >> p.state >> p.ppid;
    std::string skip;
    for (int field = 5; field < 22; ++field) rest >> skip;  // fields 5-21; the 22nd is the start time
    rest >> p.start;
    out[p.pid] = p;
  }
  return out;
}

// Every live descendant of `root`, with its start time.
std::vector<proc_entry> descendants(int root) {
  const auto all = processes();
  std::vector<proc_entry> out;
  for (const auto& [pid, p] : all) {
    for (int up = p.ppid, hops = 0; up > 1 && hops < 64; ++hops) {
      if (up == root) {
        out.push_back(p);
        break;
      }
      auto it = all.find(up);
      if (it == all.end()) break;
      up = it->second.ppid;
    }
  }
  return out;
}

// Those of `before` still alive (zombies are dead: only their parent can reap them).
std::vector<proc_entry> still_alive(const std::vector<proc_entry>& before) {
  const auto now = processes();
  std::vector<proc_entry> out;
  for (const auto& p : before) {
    auto it = now.find(p.pid);
    if (it != now.end() && it->second.start == p.start && it->second.state != 'Z') out.push_back(it->second);
  }
  return out;
}

// Starts `binary` with `args` (argv[0] first), this process's environment with PKAGENT_CACHE set
// to `cache`, and stdout and stderr sent to the files given (empty: /dev/null); its pid.
pid_t spawn_pkagent(const std::string& binary, std::vector<std::string> args, const fs::path& cache,
                    const fs::path& out = {}, const fs::path& err = {}) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {"PKAGENT_CACHE=" + cache.string()};
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("PKAGENT_CACHE=", 0) != 0) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  const std::string out_path = out.empty() ? "/dev/null" : out.string();
  const std::string err_path = err.empty() ? "/dev/null" : err.string();
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int failed = posix_spawn(&pid, binary.c_str(), &files, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  return failed ? -1 : pid;
}

class warm_pool_cli : public ::testing::TestWithParam<std::string> {};

// A run's warm sets wait for hours for their next evaluation: if pkagent dies (killed, crashed,
// its host's OOM killer) they must die with it, whatever they were doing, or a host that kills
// pkagent often fills its memory with ranks nobody will use. Killed at several moments of three
// evaluations: while the first sets start, and while the first candidate's ranks deadlock in a
// collective (deaf to the judge's closed socket) beside warm sets that wait.
TEST_P(warm_pool_cli, no_process_outlives_a_killed_pkagent) {
  const std::string isolation = GetParam();
  if (isolation == "bwrap")
    if (auto why = sandbox::unavailable_reason()) GTEST_SKIP() << "bubblewrap cannot run here: " << *why;
  const fs::path cache = fs::path(::testing::TempDir()) / ("pk_warm_pool_kill_cache_" + isolation);
  const std::string pkagent = std::string(PKAGENT_BIN_DIR) + "/pkagent";
  const std::string probe = test_data("candidates/warm_probe.py").string();
  // The first candidate deadlocks: its ranks sit in a collective and never read the judge's socket.
  const std::string hangs = test_data("candidates/allreduce_rank_hangs.py").string();
  const std::vector<std::string> args = {pkagent,    "eval",       "-q",        "--json",  "--problem", "1",
                                         "--device", "cpu",        "--no-perf", "--trials", "1",        "--timeout",
                                         "60",       "--sandbox",  isolation,   "--solution", hangs,    "--solution",
                                         probe,      "--solution", probe};

  std::size_t most_started = 0;
  for (const double after_s : {0.7, 2.0, 4.0, 7.0}) {
    const pid_t pid = spawn_pkagent(pkagent, args, cache);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(after_s));
    const std::vector<proc_entry> started = descendants(pid);
    most_started = std::max(most_started, started.size());
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::vector<proc_entry> left = still_alive(started);
    for (int i = 0; i < 100 && !left.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      left = still_alive(started);
    }
    std::string names;
    for (const auto& p : left) {
      std::ifstream in(fs::path("/proc") / std::to_string(p.pid) / "cmdline");
      std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      names += fmt::format("\n  pid {} ({}): {}", p.pid, p.state, cmd.substr(0, 200));
      ::kill(p.pid, SIGKILL);  // leave the host as it was, whatever the verdict
    }
    EXPECT_TRUE(left.empty()) << "killed " << after_s << " s into its run, pkagent left " << left.size()
                              << " of its " << started.size() << " processes running 10 s later:" << names;
  }
  // A set at least (its supervisor and two ranks), or the kills above proved nothing.
  EXPECT_GE(most_started, 3u) << "pkagent never had a set running when it was killed";
}

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

TEST(warm_sets, starts_the_sets_an_evaluation_takes_before_it_asks) {
  // An episode warms them when it starts, so that its first `pkb check` finds them started.
  warm_pool pool;
  eval_options o;
  o.world = 2;
  o.device = device_kind::cpu;
  o.isolation = sandbox::isolation::none;
  warm_sets(o);  // no pool: nothing to warm, and no error
  o.pool = &pool;
  warm_sets(o);
  EXPECT_EQ(pool.size(), 2u) << "an evaluation with timing takes two sets";
  warm_pool cuda_pool;
  o.pool = &cuda_pool;
  o.device = device_kind::cuda;
  warm_sets(o);
  EXPECT_EQ(cuda_pool.size(), 0u) << "on CUDA the lease names the GPUs; none are known yet";
}

// A rebuild that replaces pkagent's binary while a run lives: every later set would start no
// supervisor, and the failed start read as the candidate's compile_error. It is the evaluator's
// failure (exit 3), saying what happened and the fix, and what was judged before is kept.
TEST(warm_pool_replaced_binary, is_the_evaluators_failure_never_a_verdict) {
  const fs::path dir = fs::path(::testing::TempDir()) / "pk_replaced_binary";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path copy = dir / "pkagent";
  fs::copy_file(std::string(PKAGENT_BIN_DIR) + "/pkagent", copy);
  const std::string ref = (source_root() / "bench/problems/1_allreduce/reference.py").string();
  const fs::path err = dir / "stderr.txt", out = dir / "stdout.json";
  const pid_t pid = spawn_pkagent(copy.string(),
                                  {copy.string(), "eval", "-q", "--json", "--problem", "1", "--device", "cpu",
                                   "--no-perf", "--trials", "1", "--sandbox", "none", "--repeat", "4", "--pause",
                                   "3", "--solution", ref},
                                  dir / "cache", out, err);
  ASSERT_GT(pid, 0);
  // Its first evaluation's two sets (the reference's and the candidate's: a supervisor and two
  // ranks each) are running before the binary goes.
  for (int i = 0; i < 300 && descendants(pid).size() < 6; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fs::remove(copy);
  fs::copy_file(std::string(PKAGENT_BIN_DIR) + "/pkagent", copy);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 3) << text;
  EXPECT_NE(text.find("was replaced or removed while pkagent ran"), std::string::npos) << text;
  EXPECT_EQ(text.find("compile_error"), std::string::npos) << text;
  // The first evaluation's sets started before the binary went: its result is printed, not lost.
  std::ifstream printed(out);
  const auto reports = nlohmann::json::parse(printed, nullptr, false);
  ASSERT_TRUE(reports.is_array() && !reports.empty()) << "stdout: " << reports.dump();
  EXPECT_EQ(reports[0]["verdict"], "correct") << reports[0].dump(2);
}

INSTANTIATE_TEST_SUITE_P(isolation, warm_pool_cli, ::testing::Values("bwrap", "none"));

}  // namespace
}  // namespace pk::bench
