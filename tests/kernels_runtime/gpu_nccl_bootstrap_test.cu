// The NCCL bootstrap of the host library on all GPUs of the machine: rank processes that already
// share an NCCL communicator agree on a heap session key through it (kr::host::session_key_from_nccl),
// build the symmetric heap with that key alone, and run collectives on it. Label gpu; skipped
// without 2 GPUs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "kr/host/nccl_session.h"
#include "kr/host/symmetric_heap.h"
#include "kr/kr.cuh"

namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

/// Every element of rank r's input is r + 1; the sum over ranks is world * (world + 1) / 2.
int all_reduce_on_heap(kr::host::symmetric_heap& heap, cudaStream_t s) {
  const int W = heap.world(), rank = heap.rank();
  const std::size_t n = (std::size_t(1) << 20) + 8;
  auto* in = heap.allocate_n<float>(n);
  auto* out = heap.allocate_n<float>(n);
  auto* scratch = heap.allocate_n<float>(kr::all_reduce_push_scratch_elems<float>(W, n));
  const std::vector<float> mine(n, float(rank + 1));
  KR_CHECK(cudaMemcpy(in, mine.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const float want = float(W * (W + 1) / 2);
  std::vector<float> got(n);
  for (int algo = 0; algo < 2; ++algo) {
    KR_CHECK(cudaMemsetAsync(out, 0xff, n * sizeof(float), s));
    if (algo == 0) KR_CHECK(kr::all_reduce(heap.comm(), in, out, n, s));
    if (algo == 1) KR_CHECK(kr::all_reduce_push(heap.comm(), in, out, scratch, n, s));
    KR_CHECK(cudaStreamSynchronize(s));
    KR_CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != want) {
        std::fprintf(stderr, "rank %d: %s all-reduce on the NCCL-keyed heap: out[%zu] = %g, want %g\n", rank,
                     algo == 0 ? "one-shot" : "push", i, double(got[i]), double(want));
        return 1;
      }
  }
  return 0;
}

TEST(kr_gpu_nccl, heap_keyed_through_an_nccl_communicator_runs_collectives) {
  const int gpus = kr_test::gpu_count();
  // Unlike the other kernels_runtime tests this one cannot put two ranks on one GPU: NCCL
  // refuses a communicator with two ranks on the same device.
  if (gpus < 2) GTEST_SKIP() << "needs 2 or more GPUs (NCCL refuses two ranks on one GPU), found " << gpus;
  const int world = std::min(gpus, kr::max_world);
  const std::string bootstrap = kr::host::random_session_key();  // stands in for torchrun's store
  auto exits = kr::host::run_rank_processes(
      world,
      [&](int rank) {
        KR_CHECK(cudaSetDevice(rank));
        kr::host::rendezvous store(bootstrap + "-store", rank, world);
        ncclUniqueId id{};
        if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        auto got = store.all_gather({reinterpret_cast<const std::byte*>(&id), rank == 0 ? sizeof(id) : 0});
        std::memcpy(&id, got[0].payload.data(), sizeof(id));
        ncclComm_t comm = nullptr;
        check_nccl(ncclCommInitRank(&comm, world, id, rank), "ncclCommInitRank");
        cudaStream_t s;
        KR_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

        const std::string key = kr::host::session_key_from_nccl(comm, s);
        // Every rank must hold the same, fresh key.
        auto keys = store.all_gather({reinterpret_cast<const std::byte*>(key.data()), key.size()});
        for (int r = 0; r < world; ++r) {
          const std::string k(reinterpret_cast<const char*>(keys[r].payload.data()), keys[r].payload.size());
          if (r != rank && k != key) {
            std::fprintf(stderr, "rank %d: key '%s' differs from rank %d's '%s'\n", rank, key.c_str(), r, k.c_str());
            return 1;
          }
        }
        if (key.size() < 16 || key == bootstrap) {
          std::fprintf(stderr, "rank %d: implausible session key '%s'\n", rank, key.c_str());
          return 1;
        }
        int rc = 0;
        {
          kr::host::symmetric_heap heap(rank, key, rank, world, {.bytes = std::size_t(64) << 20});
          rc = all_reduce_on_heap(heap, s);
        }
        // A second key from the same communicator is a new one (a second heap can coexist).
        if (rc == 0 && kr::host::session_key_from_nccl(comm, s) == key) {
          std::fprintf(stderr, "rank %d: the second session key repeats the first\n", rank);
          rc = 1;
        }
        KR_CHECK(cudaStreamDestroy(s));
        check_nccl(ncclCommDestroy(comm), "ncclCommDestroy");
        return rc;
      },
      std::chrono::seconds(180));
  for (int r = 0; r < world; ++r) {
    EXPECT_FALSE(exits[r].timed_out) << "rank " << r << " hung";
    EXPECT_EQ(exits[r].code, 0) << "rank " << r << " failed (its stderr says why)";
  }
}

}  // namespace
