#pragma once
/// Runs one function per rank in forked child processes (one process per GPU, as torchrun does).
/// The parent must not have initialised CUDA: a CUDA context does not survive fork().
#include <chrono>
#include <functional>
#include <vector>

namespace kr::host {

struct rank_exit {
  int code = -1;        ///< exit code, or 128 + signal
  bool timed_out = false;
};

/// body(rank) runs in its own process and its return value becomes the exit code; an exception
/// is printed to stderr and exits 1. After `timeout`, the remaining children are killed (SIGKILL)
/// and reported as timed out.
std::vector<rank_exit> run_rank_processes(int world, const std::function<int(int)>& body,
                                          std::chrono::milliseconds timeout);

}  // namespace kr::host
