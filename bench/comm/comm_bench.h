#pragma once
// bench/comm: NCCL and kernels_runtime collectives side by side, one process per GPU.
#include <cstddef>
#include <string>
#include <vector>

namespace pk::comm_bench {

struct config {
  int world = 0;                       ///< GPUs (= rank processes); 0: all
  std::vector<std::size_t> sizes;      ///< bytes (AR: buffer, AG: output, RS: input, A2A: per rank)
  std::vector<std::string> ops;        ///< all_reduce, all_gather, reduce_scatter, all_to_all
  int replays = 5;                     ///< timed graph replays per measurement
  bool sweep = true;                   ///< also time the non-default kernels_runtime launch shapes
  std::vector<std::string> skip;       ///< kernels_runtime variants whose name contains one of these
  std::string session;                 ///< rendezvous key shared by the ranks
};

struct result {
  std::string op, impl;                ///< impl: "nccl" or "kr:<variant>"
  std::size_t bytes = 0;
  double time_us = 0;                  ///< per call, max over ranks, CUDA graph replay
  double algbw_gbs = 0, busbw_gbs = 0;
  std::size_t mismatches = 0;          ///< elements differing from NCCL's result (kr), or from the
                                       ///< host-checked reference pattern (nccl), summed over ranks
  bool bitwise_equal = false;          ///< kr: identical bits to NCCL's output on every rank
};

/// Runs every measurement on GPU `rank`; every rank returns the same (max-over-ranks) results.
std::vector<result> run_rank(const config& cfg, int rank);

/// busbw / algbw (nccl-tests' convention) for op at world size n.
double bus_factor(const std::string& op, int n);

}  // namespace pk::comm_bench
