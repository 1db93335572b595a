// wait_for_group_exit against real processes: a live member holds it until the limit, a killed one
// releases it, and a zombie leader does not count.
#include "sandbox/process_group.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace pk::sandbox {
namespace {

using namespace std::chrono_literals;

// A child in a process group of its own that sleeps until killed.
pid_t sleeper_group() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists when fork returns here
  return pid;
}

TEST(process_group, a_live_member_holds_the_wait_until_its_limit) {
  const pid_t g = sleeper_group();
  ASSERT_GT(g, 0);
  EXPECT_TRUE(group_has_live_process(g));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_for_group_exit(g, 100ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);
  ::kill(g, SIGKILL);
  ::waitpid(g, nullptr, 0);
}

TEST(process_group, a_killed_group_is_gone_and_its_zombie_leader_does_not_count) {
  const pid_t g = sleeper_group();
  ASSERT_GT(g, 0);
  ::killpg(g, SIGKILL);
  EXPECT_TRUE(wait_for_group_exit(g, 2000ms));  // the leader is a zombie here: not yet reaped
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(g), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, g) << "the leader should have exited (and be waiting as a zombie)";
  ::waitpid(g, nullptr, 0);
}

TEST(process_group, a_group_that_never_existed_has_no_live_process) {
  EXPECT_FALSE(group_has_live_process(0x7ffffff0));
  EXPECT_TRUE(wait_for_group_exit(0x7ffffff0, 10ms));
}

}  // namespace
}  // namespace pk::sandbox
