#include "kr/host/rank_processes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <thread>

#include "kr/host/error.h"

namespace kr::host {

std::vector<rank_exit> run_rank_processes(int world, const std::function<int(int)>& body,
                                          std::chrono::milliseconds timeout) {
  std::fflush(nullptr);  // the children would flush the parent's buffered output again
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      throw error("kr: fork failed while starting rank " + std::to_string(r));
    }
    if (pid == 0) {
      int rc = 1;
      try {
        rc = body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      } catch (...) {
        std::fprintf(stderr, "rank %d: unknown exception\n", r);
      }
      std::fflush(nullptr);
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<rank_exit> result(pids.size());
  std::vector<bool> done(pids.size(), false);
  std::size_t left = pids.size();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (left > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        result[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        done[i] = true;
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) {
          ::kill(pids[i], SIGKILL);
          ::waitpid(pids[i], nullptr, 0);
          result[i] = {128 + SIGKILL, true};
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return result;
}

}  // namespace kr::host
