// The sandbox against real bubblewrap: each test runs a real command and asserts the exact
// outcome (files, environment, network, process limits, output capture, timeouts, memory).
#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stop_token>
#include <thread>
#include <sstream>

#include <gtest/gtest.h>

#include "config/read_file.h"
#include "host_processes.h"
#include "sandbox/cgroup.h"
#include "sandbox/live_group.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

using namespace std::chrono_literals;
using testing::count_host_processes;
using testing::temp_dir;

class sandbox_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = unavailable_reason()) GTEST_SKIP() << "no sandbox on this host: " << *why;
    s.workspace = ws.path();
    s.limits.wall = 60s;
  }
  result run_cmd(const std::string& command) { return run(s, command); }

  temp_dir ws;
  spec s;
};

TEST_F(sandbox_test, writes_outside_the_workspace_fail_and_leave_the_host_file_unchanged) {
  temp_dir outside("/var/tmp");  // visible (read-only) inside, unlike the private /tmp
  const auto host_file = outside.path() / "host.txt";
  std::ofstream(host_file) << "original";
  const auto r = run_cmd("echo changed > " + host_file.string() + "; echo rc=$?; echo x > /etc/pk-sandbox-test; "
                         "echo rc=$?; echo kept > /workspace/out.txt");
  EXPECT_EQ(r.out.text, "rc=1\nrc=1\n");
  EXPECT_NE(r.err.text.find(host_file.string() + ": Read-only file system"), std::string::npos) << r.err.text;
  EXPECT_NE(r.err.text.find("/etc/pk-sandbox-test: Read-only file system"), std::string::npos) << r.err.text;
  EXPECT_EQ(read_file(host_file), "original");
  EXPECT_FALSE(std::filesystem::exists("/etc/pk-sandbox-test"));
  EXPECT_EQ(read_file(ws.path() / "out.txt"), "kept\n") << "the workspace is writable";
  EXPECT_EQ(r.exit_code, 0);
}

TEST_F(sandbox_test, a_file_planted_in_home_cannot_be_read) {
  const char* home_env = std::getenv("HOME");
  const std::filesystem::path home = home_env && *home_env ? home_env : "/root";
  const auto planted = home / ".pk-sandbox-test-secret";
  std::ofstream(planted) << "the-secret-text";
  const auto r = run_cmd("cat " + planted.string() + "; cat /root/.pk-sandbox-test-secret; ls -A ~ /root");
  std::filesystem::remove(planted);
  EXPECT_EQ(r.out.text.find("the-secret-text"), std::string::npos);
  EXPECT_NE(r.err.text.find(planted.string() + ": No such file or directory"), std::string::npos) << r.err.text;
  EXPECT_EQ(r.exit_code, 0);
  // $HOME inside holds only the profile the sandbox wrote there.
  EXPECT_EQ(r.out.text.find(".pk-sandbox-test-secret"), std::string::npos) << r.out.text;
}

TEST_F(sandbox_test, hidden_directories_show_empty_but_binds_into_them_still_apply) {
  temp_dir tree("/var/tmp");  // visible (read-only) inside unless hidden
  std::filesystem::create_directories(tree.path() / "bench" / "problems");
  std::filesystem::create_directories(tree.path() / "build" / "bin");
  std::ofstream(tree.path() / "bench" / "problems" / "inputs.py") << "the-generator";
  std::ofstream(tree.path() / "build" / "bin" / "tool") << "the-tool";
  s.hidden = {tree.path()};
  s.binds.push_back({tree.path() / "build" / "bin", tree.path() / "build" / "bin", false});
  const auto r = run_cmd("cat " + (tree.path() / "bench/problems/inputs.py").string() + "; ls -A " +
                         tree.path().string() + "; cat " + (tree.path() / "build/bin/tool").string());
  EXPECT_EQ(r.out.text.find("the-generator"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("the-tool"), std::string::npos) << r.out.text << r.err.text;
  EXPECT_EQ(r.out.text.find("bench"), std::string::npos) << r.out.text;
}

TEST_F(sandbox_test, a_stop_request_kills_the_sandbox_at_once) {
  std::stop_source stop;
  s.stop = stop.get_token();
  std::thread stopper([&] {
    std::this_thread::sleep_for(500ms);
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_cmd("sleep 30");
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(r.ok());
}

TEST_F(sandbox_test, an_api_key_given_to_pkagent_is_not_visible_inside) {
  ::setenv("OPENAI_API_KEY", "sk-pk-sandbox-test-key", 1);
  const auto r = run_cmd("env; echo \"key=${OPENAI_API_KEY:-unset}\"");
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(r.out.text.find("sk-pk-sandbox-test-key"), std::string::npos);
  EXPECT_NE(r.out.text.find("key=unset\n"), std::string::npos);
  for (const char* forced : {"NCCL_NVLS_ENABLE=0\n", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1\n", "NVSHMEM_DISABLE_NVLS=1\n"}) {
    EXPECT_NE(r.out.text.find(forced), std::string::npos) << forced;
  }
}

TEST_F(sandbox_test, a_tcp_listener_on_host_loopback_is_unreachable_but_private_loopback_works) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  const auto r = run_cmd("(exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) + ") 2>&1; echo rc=$?; "
                         "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
                         "socket.create_connection(s.getsockname()); print('private loopback ok')\"");
  EXPECT_NE(r.out.text.find("Connection refused"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("rc=1\n"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("private loopback ok\n"), std::string::npos) << r.out.text << r.err.text;
  EXPECT_LT(::accept(listener, nullptr, nullptr), 0) << "the host listener was reached";
  EXPECT_EQ(errno, EAGAIN);
  ::close(listener);
}

TEST_F(sandbox_test, a_fork_bomb_ends_within_the_timeout_and_leaves_no_process) {
  s.limits.wall = 5s;
  s.limits.processes = 64;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_cmd("bomb() { sleep 4250.5 & bomb | bomb & }; bomb; wait");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 9s);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(count_host_processes("4250.5"), 0);
  if (detect_cgroups().has_pids()) {
    EXPECT_NE(r.err.text.find("Resource temporarily unavailable"), std::string::npos)
        << "the pids limit should have stopped the bomb:\n" << r.err.text.substr(0, 500);
  }
}

TEST_F(sandbox_test, yes_is_truncated_with_the_exact_total) {
  s.limits.output_bytes = 1 << 20;
  const auto r = run_cmd("yes | head -c 5000000");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.total_bytes, 5000000u);
  EXPECT_TRUE(r.out.truncated);
  EXPECT_EQ(r.out.text.substr(0, 6), "y\ny\ny\n");
  EXPECT_EQ(r.out.text.substr(r.out.text.size() - 4), "y\ny\n");
  EXPECT_NE(r.out.text.find("[... 3951424 bytes omitted ...]"), std::string::npos);
  EXPECT_LE(r.out.text.size(), (1u << 20) + 64);
  EXPECT_FALSE(r.err.truncated);
}

TEST_F(sandbox_test, a_disowned_sleep_is_killed_at_the_timeout_with_nothing_left) {
  s.limits.wall = 1s;
  const auto r = run_cmd("sleep 4251.5 & disown; sleep 4251.5");
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.shell_status(), 124);
  EXPECT_GE(r.wall_seconds, 1.0);
  EXPECT_LT(r.wall_seconds, 4.0);
  EXPECT_EQ(count_host_processes("4251.5"), 0);
}

TEST_F(sandbox_test, a_2_gib_allocation_under_512_mib_is_oom_killed) {
  const auto& cg = detect_cgroups();
  if (!cg.has_memory()) GTEST_SKIP() << "no memory cgroup on this host: " << cg.problem;
  s.limits.memory_bytes = 512ull << 20;
  const auto r = run_cmd("python3 -c \"b = bytearray(b'x') * (2 << 30); print(len(b))\"");
  EXPECT_TRUE(r.oom_killed) << r.note << r.err.text;
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out.text, "") << "the allocation must not have succeeded";
  EXPECT_TRUE(r.note.empty()) << r.note;
}

TEST_F(sandbox_test, nvcc_compiles_a_cu_file_inside) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  std::ofstream(ws.path() / "k.cu") << "__global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  s.limits.wall = 300s;
  const auto r = run_cmd("nvcc -c k.cu -o k.o && echo compiled");
  EXPECT_EQ(r.exit_code, 0) << r.err.text;
  EXPECT_EQ(r.out.text, "compiled\n");
  EXPECT_GT(std::filesystem::file_size(ws.path() / "k.o"), 0u);
}

TEST_F(sandbox_test, no_nvidia_device_is_visible_without_gpus) {
  const auto r = run_cmd("ls /dev; ls -d /dev/nvidia* 2>&1; echo \"cvd=${CUDA_VISIBLE_DEVICES-unset}\"");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.text.find("null\n"), std::string::npos) << "a minimal /dev exists";
  EXPECT_NE(r.out.text.find("ls: cannot access '/dev/nvidia*': No such file or directory"), std::string::npos)
      << r.out.text;
  EXPECT_NE(r.out.text.find("cvd=unset\n"), std::string::npos);
}

TEST_F(sandbox_test, namespaces_and_seccomp_are_in_force) {
  const auto r = run_cmd(
      "echo pid=$$; hostname; grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status; "
      "unshare --user true 2>&1; echo unshare=$?; ls /proc | grep -c '^[0-9]'");
  EXPECT_EQ(r.exit_code, 0) << r.err.text;
  std::istringstream lines(r.out.text);
  std::string line;
  std::getline(lines, line);
  EXPECT_LE(std::stoi(line.substr(4)), 5) << "bash is one of the first pids of a fresh pid namespace";
  std::getline(lines, line);
  EXPECT_EQ(line, "pkagent-sandbox");
  EXPECT_NE(r.out.text.find("Seccomp:\t2\n"), std::string::npos) << r.out.text;
  EXPECT_NE(r.out.text.find("NoNewPrivs:\t1\n"), std::string::npos);
  EXPECT_NE(r.out.text.find("CapEff:\t0000000000000000\n"), std::string::npos);
  EXPECT_NE(r.out.text.find("Operation not permitted"), std::string::npos) << r.out.text;
  EXPECT_EQ(r.out.text.find("unshare=0"), std::string::npos);
}

TEST_F(sandbox_test, exit_codes_signals_stdin_and_the_workspace_cwd) {
  auto r = run_cmd("pwd; exit 7");
  EXPECT_EQ(r.out.text, "/workspace\n");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.shell_status(), 7);
  r = run_cmd("kill -KILL $$");
  EXPECT_EQ(r.shell_status(), 128 + SIGKILL);
  s.stdin_data = "from stdin\n";
  r = run_cmd("cat");
  EXPECT_EQ(r.out.text, "from stdin\n");
  EXPECT_GE(r.wall_seconds, 0.0);
}

TEST_F(sandbox_test, cpu_seconds_are_reported) {
  // A pure shell busy loop: its CPU time is most of its wall time, even on a loaded host.
  const auto r = run_cmd("i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_GT(r.cpu_seconds, 0.1) << "wall " << r.wall_seconds;
  EXPECT_LT(r.cpu_seconds, r.wall_seconds + 0.05) << "one single-threaded loop";
}

// What a judge relies on to stop a process set between its turns: everything inside stops, a
// child, a daemon in its own session and processes forked while it freezes included, and a
// frozen sandbox still ends at a stop request or its timeout.
class live_group_test : public sandbox_test {
 protected:
  void SetUp() override {
    sandbox_test::SetUp();
    if (IsSkipped()) return;
    if (!detect_cgroups().has_freezer())
      GTEST_SKIP() << "no cgroup freezer on this host: " << detect_cgroups().describe();
    s.live = std::make_shared<live_group>();
  }

  // Starts three writers, each appending to its log every few ms: a background child, a daemon
  // in its own session, and a loop that forks a new short-lived process for every line. The
  // sleep's marker is the test's own, since ctest may run both tests side by side.
  void start(std::stop_token stop, const std::string& marker) {
    s.stop = stop;
    runner = std::jthread([this, marker] {
      r = run_cmd("sleep " + marker + " & "
                  "(while :; do echo x >> child.log; sleep 0.003; done) & "
                  "setsid sh -c 'while :; do echo x >> daemon.log; sleep 0.003; done' & "
                  "while :; do sh -c 'echo x >> forks.log'; done");
    });
    const auto limit = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < limit && (!s.live->can_freeze() || size("forks.log") < 10 ||
                                                         size("daemon.log") < 10 || size("child.log") < 10))
      std::this_thread::sleep_for(10ms);
  }
  std::uintmax_t size(const std::string& log) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(ws.path() / log, ec);
    return ec ? 0 : n;
  }
  std::vector<std::uintmax_t> sizes() { return {size("child.log"), size("daemon.log"), size("forks.log")}; }

  std::jthread runner;
  result r;
};

TEST_F(live_group_test, freezes_every_process_inside_and_thaws_them) {
  std::stop_source stop;
  start(stop.get_token(), "4253.5");
  ASSERT_TRUE(s.live->can_freeze()) << s.live->why_not();
  ASSERT_TRUE(s.live->freeze(true));
  std::this_thread::sleep_for(100ms);  // a write under way when the freeze came lands
  const auto frozen = sizes();
  for (auto n : frozen) ASSERT_GT(n, 0u) << "a writer never started";
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(sizes(), frozen) << "something inside kept running while frozen";
  ASSERT_TRUE(s.live->freeze(false));
  std::this_thread::sleep_for(400ms);
  const auto thawed = sizes();
  for (std::size_t i = 0; i < thawed.size(); ++i) EXPECT_GT(thawed[i], frozen[i]) << "writer " << i << " stayed frozen";
  ASSERT_TRUE(s.live->freeze(true));
  const auto t0 = std::chrono::steady_clock::now();
  stop.request_stop();  // while frozen
  runner.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(count_host_processes("4253.5"), 0);
  EXPECT_FALSE(s.live->freeze(true)) << "an ended sandbox cannot be frozen";
  EXPECT_EQ(s.live->why_not(), "the sandbox has ended");
}

TEST_F(live_group_test, a_frozen_sandbox_still_ends_at_its_timeout) {
  s.limits.wall = 3s;
  start(std::stop_token(), "4254.5");
  ASSERT_TRUE(s.live->freeze(true)) << s.live->why_not();
  runner.join();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_seconds, 8.0);
  EXPECT_EQ(count_host_processes("4254.5"), 0);
}

TEST(sandbox_none_test, runs_unsandboxed_with_a_warning) {
  temp_dir ws;
  spec s;
  s.workspace = ws.path();
  s.isolation = isolation::none;
  ::setenv("OPENAI_API_KEY", "sk-pk-none-test", 1);
  const auto r = run(s, "pwd; echo \"key=${OPENAI_API_KEY:-unset}\"");
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(r.out.text, ws.path().string() + "\nkey=unset\n");
  EXPECT_NE(r.note.find("UNSANDBOXED"), std::string::npos) << r.note;
}

}  // namespace
}  // namespace pk::sandbox
