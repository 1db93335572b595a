// process.h against real processes: capture, exit status, timeouts that kill the whole group,
// stdin, environment, several children at once.
#include "sandbox/process.h"

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "host_processes.h"

namespace pk::sandbox {
namespace {

using namespace std::chrono_literals;

process_spec sh(const std::string& script) {
  process_spec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = {{"PATH", "/usr/bin:/bin"}};
  return s;
}

int count_processes(const std::string& marker) { return testing::count_host_processes(marker); }

TEST(process_test, captures_both_streams_and_exit_code) {
  auto r = run_process(sh("echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.out.text, "out\n");
  EXPECT_EQ(r.err.text, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.shell_status(), 3);
}

TEST(process_test, reports_the_killing_signal) {
  auto r = run_process(sh("kill -TERM $$"));
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(r.shell_status(), 128 + SIGTERM);
}

TEST(process_test, environment_is_exactly_the_spec) {
  setenv("PK_PROCESS_TEST_SECRET", "leak", 1);
  auto s = sh("env | sort");
  s.env["ONLY"] = "this";
  auto r = run_process(s);
  EXPECT_EQ(r.out.text.find("PK_PROCESS_TEST_SECRET"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("ONLY=this\n"), std::string::npos) << r.out.text;
}

TEST(process_test, runs_in_cwd_and_finds_programs_on_the_spec_path) {
  process_spec s;
  s.argv = {"pwd"};
  s.env = {{"PATH", "/usr/bin:/bin"}};
  s.cwd = "/usr";
  EXPECT_EQ(run_process(s).out.text, "/usr\n");
}

TEST(process_test, feeds_stdin_data) {
  auto s = sh("tr a-z A-Z");
  s.stdin_data = "hello\n";
  EXPECT_EQ(run_process(s).out.text, "HELLO\n");
}

TEST(process_test, caps_output_as_head_and_tail_with_the_total) {
  auto s = sh("head -c 100000 /dev/zero | tr '\\0' a; printf END");
  s.output_cap = 1000;
  auto r = run_process(s);
  EXPECT_EQ(r.out.total_bytes, 100003u);
  EXPECT_TRUE(r.out.truncated);
  EXPECT_EQ(r.out.text.substr(0, 500), std::string(500, 'a'));
  EXPECT_EQ(r.out.text.substr(r.out.text.size() - 3), "END");
  EXPECT_NE(r.out.text.find("[... 99003 bytes omitted ...]"), std::string::npos);
}

TEST(process_test, timeout_kills_the_whole_group) {
  auto s = sh("sleep 4242.5 & sleep 4242.5 & echo started; wait");
  s.timeout = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_process(s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.shell_status(), 124);
  EXPECT_EQ(r.out.text, "started\n");
  EXPECT_EQ(count_processes("4242.5"), 0);
}

TEST(process_test, background_leftovers_die_with_the_child) {
  auto r = run_process(sh("sleep 4243.5 >/dev/null 2>&1 & echo done"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.text, "done\n");
  EXPECT_EQ(count_processes("4243.5"), 0);
}

TEST(process_test, applies_rlimits_and_reports_cpu_time) {
  auto s = sh("ulimit -n; while :; do :; done");
  s.rlimits = {{RLIMIT_NOFILE, 64}, {RLIMIT_CPU, 1}};
  s.timeout = 10s;
  auto r = run_process(s);
  EXPECT_EQ(r.out.text, "64\n");
  EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << r.signal;
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.cpu_seconds, 0.5);  // about 1 s, counted in ticks
}

TEST(process_test, missing_program_is_an_error_naming_it) {
  process_spec s;
  s.argv = {"no-such-program-pk"};
  s.env = {{"PATH", "/usr/bin:/bin"}};
  try {
    run_process(s);
    FAIL() << "expected process_error";
  } catch (const process_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-program-pk"), std::string::npos) << e.what();
  }
}

TEST(process_test, wait_any_returns_the_first_to_finish_and_kill_all_ends_the_rest) {
  process_set set;
  const auto slow = set.start(sh("sleep 4244.5"));
  const auto failing = set.start(sh("sleep 0.2; exit 7"));
  const auto first = set.wait_any();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, failing);
  EXPECT_EQ(set.result(failing).exit_code, 7);
  EXPECT_FALSE(set.finished(slow));
  set.kill_all();
  EXPECT_EQ(set.wait_any(), slow);
  EXPECT_TRUE(set.result(slow).killed);
  EXPECT_EQ(set.result(slow).signal, SIGKILL);
  EXPECT_EQ(set.wait_any(), std::nullopt);
  EXPECT_EQ(count_processes("4244.5"), 0);
}

TEST(process_test, wait_any_gives_up_after_its_limit) {
  process_set set;
  set.start(sh("sleep 4245.5"));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(set.wait_any(100ms), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_THROW(set.result(0), std::logic_error);
}  // the destructor kills and reaps it

TEST(process_test, destructor_leaves_nothing_running) {
  {
    process_set set;
    set.start(sh("sleep 4246.5 & sleep 4246.5"));
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(count_processes("4246.5"), 0);
}

}  // namespace
}  // namespace pk::sandbox
