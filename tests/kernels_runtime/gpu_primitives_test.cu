// Every kernels_runtime primitive across rank processes, against a reference computed on the host
// from the same random data. One rank per GPU; on a host with fewer GPUs than ranks (at least 2,
// KR_TEST_WORLD to pick), ranks share GPUs: the GPU time-slices them, so every cross-rank wait
// takes a time slice and the long-running tests run fewer rounds there. Label gpu; skipped
// without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "gpu_test_util.h"
#include "kr/host/session_key.h"
#include "kr/host/symmetric_heap.h"
#include "kr/kr.cuh"

namespace {

using bf16 = __nv_bfloat16;
using kr::host::heap_backend;

#define REQUIRE_GPU()                                                                                   \
  do {                                                                                                  \
    if (kr_test::gpu_count() < 1)                                                                       \
      GTEST_SKIP() << "needs a GPU (its ranks share one where there are fewer GPUs than ranks), found none"; \
  } while (0)

/// Rounds for a test of many cross-rank handshakes: `one_per_gpu` where every rank has its own GPU,
/// `co_located` where ranks share one (each handshake then waits for a time slice, milliseconds).
int handshake_rounds(int one_per_gpu, int co_located) {
  return kr_test::test_placement().co_located() ? co_located : one_per_gpu;
}

/// Runs body(heap) on every rank, one process each, and expects every rank to return 0.
void on_every_rank(heap_backend backend, std::size_t heap_bytes,
                   const std::function<int(kr::host::symmetric_heap&)>& body) {
  const kr::host::placement where = kr_test::test_placement();
  const int world = where.world();
  static bool said = false;  // once per test binary: where the ranks run
  if (!said) std::printf("kr_gpu: %s\n", where.describe().c_str());
  said = true;
  const std::string session = kr::host::random_session_key();
  auto exits = kr::host::run_rank_processes(
      world,
      [&](int rank) {
        kr::host::heap_options opt;
        opt.bytes = heap_bytes;
        opt.backend = backend;
        kr::host::symmetric_heap heap(where.device_of(rank), session, rank, world, opt);
        return body(heap);
      },
      std::chrono::seconds(300));
  for (int r = 0; r < world; ++r) {
    EXPECT_FALSE(exits[r].timed_out) << "rank " << r << " hung";
    EXPECT_EQ(exits[r].code, 0) << "rank " << r << " failed (its stderr says why)";
  }
}

int fail(int rank, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "rank %d: ", rank);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  return 1;
}

unsigned read_errors(unsigned* errors_dev) {
  unsigned errors = 0;
  KR_CHECK(cudaMemcpy(&errors, errors_dev, sizeof(errors), cudaMemcpyDeviceToHost));
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Signals and barriers

__global__ void ping_pong(kr::comm c, std::uint64_t* data, int rounds, unsigned* errors) {
  if (c.rank > 1) return;
  std::uint64_t* to_peer = c.peer(data, 1 - c.rank);
  std::uint64_t* inbox = c.slot(c.rank, 2, 1 - c.rank, 0);
  std::uint64_t* peer_inbox = c.slot(1 - c.rank, 2, c.rank, 0);
  for (std::uint64_t k = 1; k <= std::uint64_t(rounds); ++k) {
    if (c.rank == 0) {
      *to_peer = k;
      kr::signal_add(peer_inbox);
      kr::wait_geq(inbox, k, "ping_pong rank 0");
      if (*data != 1000000 + k) atomicAdd(errors, 1u);
    } else {
      kr::wait_geq(inbox, k, "ping_pong rank 1");
      if (*data != k) atomicAdd(errors, 1u);
      *to_peer = 1000000 + k;
      kr::signal_add(peer_inbox);
    }
  }
}

TEST(kr_gpu, signal_wait_ping_pong_carries_data_every_round) {
  REQUIRE_GPU();
  const int n = handshake_rounds(10000, 300);
  on_every_rank(heap_backend::vmm, 1 << 20, [n](kr::host::symmetric_heap& heap) {
    auto* data = heap.allocate_n<std::uint64_t>(1);
    unsigned* errors = nullptr;
    KR_CHECK(cudaMalloc(&errors, sizeof(unsigned)));
    KR_CHECK(cudaMemset(errors, 0, sizeof(unsigned)));
    heap.barrier();
    ping_pong<<<1, 1>>>(heap.comm(), data, n, errors);
    KR_CHECK(cudaGetLastError());
    KR_CHECK(cudaDeviceSynchronize());
    const unsigned e = read_errors(errors);
    return e == 0 ? 0 : fail(heap.rank(), "%u of %d rounds saw stale data", e, n);
  });
}

__global__ void mailbox_rounds(kr::comm c, std::uint64_t* mailbox, int rounds, unsigned* errors) {
  const int t = threadIdx.x, b = blockIdx.x;
  for (std::uint64_t k = 1; k <= std::uint64_t(rounds); ++k) {
    if (t < c.world) c.peer(mailbox, t)[c.rank * gridDim.x + b] = k * 64 + c.rank;
    kr::block_barrier(c, 1);
    if (t < c.world && mailbox[t * gridDim.x + b] != k * 64 + t) atomicAdd(errors, 1u);
    kr::block_barrier(c, 1);
  }
}

TEST(kr_gpu, block_barrier_orders_peer_writes_every_round) {
  REQUIRE_GPU();
  const int n = handshake_rounds(10000, 200);
  on_every_rank(heap_backend::vmm, 1 << 20, [n](kr::host::symmetric_heap& heap) {
    const int blocks = 8;
    auto* mailbox = heap.allocate_n<std::uint64_t>(kr::max_world * blocks);
    unsigned* errors = nullptr;
    KR_CHECK(cudaMalloc(&errors, sizeof(unsigned)));
    KR_CHECK(cudaMemset(errors, 0, sizeof(unsigned)));
    heap.barrier();
    mailbox_rounds<<<blocks, 64>>>(heap.comm(), mailbox, n, errors);
    KR_CHECK(cudaGetLastError());
    KR_CHECK(cudaDeviceSynchronize());
    const unsigned e = read_errors(errors);
    return e == 0 ? 0 : fail(heap.rank(), "%u stale mailbox reads in %d rounds x %d blocks", e, n, blocks);
  });
}

__global__ void grid_rounds(kr::comm c, unsigned* board, int rounds, unsigned* errors) {
  const unsigned entries = unsigned(c.world) * gridDim.x;
  for (unsigned k = 1; k <= unsigned(rounds); ++k) {
    if (threadIdx.x < c.world) c.peer(board, threadIdx.x)[c.rank * gridDim.x + blockIdx.x] = k;
    kr::grid_barrier(c, 3);
    // Every block checks every entry: writes of all blocks of all ranks must be visible.
    for (unsigned i = threadIdx.x; i < entries; i += blockDim.x)
      if (board[i] != k) atomicAdd(errors, 1u);
    kr::grid_barrier(c, 3);
  }
}

TEST(kr_gpu, grid_barrier_orders_every_block_of_every_rank) {
  REQUIRE_GPU();
  const int n = handshake_rounds(300, 40);
  on_every_rank(heap_backend::vmm, 1 << 20, [n](kr::host::symmetric_heap& heap) {
    int sms = 0;
    KR_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, heap.device()));
    const int blocks = sms;  // one block per SM: co-resident
    auto* board = heap.allocate_n<unsigned>(std::size_t(kr::max_world) * blocks);
    unsigned* errors = nullptr;
    KR_CHECK(cudaMalloc(&errors, sizeof(unsigned)));
    KR_CHECK(cudaMemset(errors, 0, sizeof(unsigned)));
    heap.barrier();
    for (int launch = 0; launch < 3; ++launch) grid_rounds<<<blocks, 128>>>(heap.comm(), board, n, errors);
    KR_CHECK(cudaGetLastError());
    KR_CHECK(cudaDeviceSynchronize());
    const unsigned e = read_errors(errors);
    return e == 0 ? 0 : fail(heap.rank(), "%u stale board entries", e);
  });
}

__global__ void wait_forever(kr::comm c) { kr::wait_geq(c.slot(c.rank, 0, 0, 0), 1, "test: nobody signals"); }

TEST(kr_gpu, a_wait_that_never_completes_traps_instead_of_hanging) {
  if (kr_test::gpu_count() < 1) GTEST_SKIP() << "needs a GPU";
  const std::string session = kr::host::random_session_key();
  auto exits = kr::host::run_rank_processes(
      1,
      [&](int) {
        kr::host::symmetric_heap heap(0, session, 0, 1, {});
        const auto t0 = std::chrono::steady_clock::now();
        wait_forever<<<1, 1>>>(heap.comm());
        const cudaError_t e = cudaDeviceSynchronize();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "wait_forever ended after %.1f s with %s\n", s, cudaGetErrorString(e));
        std::fflush(nullptr);
        _exit(e != cudaSuccess && s < 30 ? 0 : 1);  // the context is gone; skip the heap's teardown
        return 1;
      },
      std::chrono::seconds(120));
  EXPECT_FALSE(exits[0].timed_out);
  EXPECT_EQ(exits[0].code, 0);
}

// ---------------------------------------------------------------------------------------------
// 16-byte and bulk (TMA) peer copies

__global__ void vec_push_pull(kr::comm c, uint4* buf, uint4* pulled, std::size_t n, unsigned* errors) {
  const int next = (c.rank + 1) % c.world, prev = (c.rank + c.world - 1) % c.world;
  auto pattern = [](int r, std::size_t i) { return make_uint4(unsigned(r), unsigned(i), ~unsigned(i), 7u * unsigned(r)); };
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    kr::st_v4(c.peer(buf, next) + i, pattern(c.rank, i));
  kr::block_barrier(c, 0);  // pairs block b with block b: each block checks what its peer block wrote
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint4 want = pattern(prev, i), got = kr::ld_v4(buf + i);
    const uint4 far = kr::ld_v4(c.peer(buf, next) + i);  // a peer load of what I pushed
    pulled[i] = far;
    if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w) atomicAdd(errors, 1u);
    const uint4 mine = pattern(c.rank, i);
    if (far.x != mine.x || far.y != mine.y || far.z != mine.z || far.w != mine.w) atomicAdd(errors, 1u);
  }
  kr::block_barrier(c, 0);
}

TEST(kr_gpu, vector_peer_stores_and_loads) {
  REQUIRE_GPU();
  on_every_rank(heap_backend::vmm, 64 << 20, [](kr::host::symmetric_heap& heap) {
    const std::size_t n = (std::size_t(16) << 20) / 16;
    auto* buf = heap.allocate_n<uint4>(n);
    uint4* pulled = nullptr;
    unsigned* errors = nullptr;
    KR_CHECK(cudaMalloc(&pulled, n * 16));
    KR_CHECK(cudaMalloc(&errors, sizeof(unsigned)));
    KR_CHECK(cudaMemset(errors, 0, sizeof(unsigned)));
    heap.barrier();
    vec_push_pull<<<128, 256>>>(heap.comm(), buf, pulled, n, errors);
    KR_CHECK(cudaGetLastError());
    KR_CHECK(cudaDeviceSynchronize());
    const unsigned e = read_errors(errors);
    return e == 0 ? 0 : fail(heap.rank(), "%u wrong 16-byte packs", e);
  });
}

constexpr int tma_chunk = 4096;  // floats per block: 16 KiB of shared memory

__global__ void tma_roundtrip(kr::comm c, const float* src, float* dst, float* acc, const bf16* src_b, bf16* acc_b) {
  __shared__ alignas(128) float stage[tma_chunk];
  __shared__ alignas(128) bf16 stage_b[tma_chunk];
  __shared__ kr::mbarrier bar;
  const int next = (c.rank + 1) % c.world, prev = (c.rank + c.world - 1) % c.world;
  const std::size_t off = std::size_t(blockIdx.x) * tma_chunk;
  for (int i = threadIdx.x; i < tma_chunk; i += blockDim.x) {
    acc[off + i] = 1.0f;
    acc_b[off + i] = __float2bfloat16(1.0f);
  }
  kr::block_barrier(c, 0);  // everyone's acc is initialised before anyone adds into it
  if (threadIdx.x == 0) {
    kr::mbarrier_init(&bar);
    kr::bulk_expect(&bar, tma_chunk * (sizeof(float) + sizeof(bf16)));
    kr::bulk_load(stage, c.peer(src, prev) + off, tma_chunk * sizeof(float), &bar);
    kr::bulk_load(stage_b, c.peer(src_b, prev) + off, tma_chunk * sizeof(bf16), &bar);
  }
  __syncthreads();
  kr::bulk_wait(&bar, 0);
  if (threadIdx.x == 0) {
    kr::bulk_store(c.peer(dst, next) + off, stage, tma_chunk * sizeof(float));
    kr::bulk_store_add_f32(c.peer(acc, next) + off, stage, tma_chunk * sizeof(float));
    kr::bulk_store_add_bf16(c.peer(acc_b, next) + off, stage_b, tma_chunk * sizeof(bf16));
    kr::bulk_commit();
    kr::bulk_wait_all();
  }
  kr::block_barrier(c, 0);
}

TEST(kr_gpu, bulk_copies_load_store_and_add_across_ranks) {
  REQUIRE_GPU();
  on_every_rank(heap_backend::vmm, 16 << 20, [](kr::host::symmetric_heap& heap) {
    const int blocks = 8, W = heap.world(), rank = heap.rank();
    const std::size_t n = std::size_t(blocks) * tma_chunk;
    auto* src = heap.allocate_n<float>(n);
    auto* dst = heap.allocate_n<float>(n);
    auto* acc = heap.allocate_n<float>(n);
    auto* src_b = heap.allocate_n<bf16>(n);
    auto* acc_b = heap.allocate_n<bf16>(n);
    std::vector<float> h(n);
    std::vector<bf16> hb(n);
    for (std::size_t i = 0; i < n; ++i) {
      h[i] = float(rank * 100000 + int(i));
      hb[i] = __float2bfloat16(float(rank + 1));
    }
    KR_CHECK(cudaMemcpy(src, h.data(), n * 4, cudaMemcpyHostToDevice));
    KR_CHECK(cudaMemcpy(src_b, hb.data(), n * 2, cudaMemcpyHostToDevice));
    heap.barrier();
    tma_roundtrip<<<blocks, 128>>>(heap.comm(), src, dst, acc, src_b, acc_b);
    KR_CHECK(cudaGetLastError());
    KR_CHECK(cudaDeviceSynchronize());
    // Rank q's dst and acc hold what rank q-1 loaded from rank q-2.
    const int origin = ((rank - 2) % W + W) % W;
    std::vector<float> d(n), a(n);
    std::vector<bf16> ab(n);
    KR_CHECK(cudaMemcpy(d.data(), dst, n * 4, cudaMemcpyDeviceToHost));
    KR_CHECK(cudaMemcpy(a.data(), acc, n * 4, cudaMemcpyDeviceToHost));
    KR_CHECK(cudaMemcpy(ab.data(), acc_b, n * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) {
      const float want = float(origin * 100000 + int(i));
      if (d[i] != want) return fail(rank, "bulk_store: dst[%zu] = %g, want %g", i, d[i], want);
      if (a[i] != want + 1.0f) return fail(rank, "bulk_store_add_f32: acc[%zu] = %g, want %g", i, a[i], want + 1);
      if (__bfloat162float(ab[i]) != float(origin + 2))
        return fail(rank, "bulk_store_add_bf16: acc[%zu] = %g, want %d", i, __bfloat162float(ab[i]), origin + 2);
    }
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------
// Collectives against a host reference, both heap backends

/// Rank r's input: n values uniform in [-1, 1), exactly representable in bf16.
std::vector<float> rank_data(int rank, std::size_t n, unsigned salt) {
  std::mt19937 gen(1234u + 7919u * unsigned(rank) + salt);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = __bfloat162float(__float2bfloat16(dist(gen)));
  return v;
}

template <class T>
std::vector<T> to_t(const std::vector<float>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, float>)
      out[i] = v[i];
    else
      out[i] = __float2bfloat16(v[i]);
  }
  return out;
}

template <class T>
float as_float(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __bfloat162float(v);
}

template <class T>
T round_to(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __float2bfloat16(v);
}

/// Sum in rank order in float, rounded once: what the kernels compute, bit for bit.
template <class T>
std::vector<T> reference_sum(int world, std::size_t n, std::size_t offset, std::size_t len, unsigned salt) {
  std::vector<float> acc(len, 0.f);
  for (int r = 0; r < world; ++r) {
    const auto d = rank_data(r, n, salt);
    for (std::size_t i = 0; i < len; ++i) acc[i] += d[offset + i];
  }
  std::vector<T> out(len);
  for (std::size_t i = 0; i < len; ++i) out[i] = round_to<T>(acc[i]);
  return out;
}

template <class T>
int compare(int rank, const char* what, std::size_t n, const T* dev, const std::vector<T>& want) {
  std::vector<T> got(want.size());
  KR_CHECK(cudaMemcpy(got.data(), dev, want.size() * sizeof(T), cudaMemcpyDeviceToHost));
  if (std::memcmp(got.data(), want.data(), want.size() * sizeof(T)) == 0) return 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return fail(rank, "%s (n = %zu): element %zu is %g, want %g", what, n, i, double(as_float(got[i])),
                  double(as_float(want[i])));
  return 0;
}

template <class T>
int check_all_reduce(kr::host::symmetric_heap& heap, const kr::copy_engines& ce, std::size_t n) {
  const int W = heap.world(), rank = heap.rank();
  auto* in = heap.allocate_n<T>(n);
  auto* out = heap.allocate_n<T>(n);
  T* scratch = nullptr;  // copy-engine landing zone for the peers' inputs (any memory of this GPU)
  KR_CHECK(cudaMalloc(&scratch, std::max<std::size_t>(1, n * sizeof(T) * (W - 1))));
  auto* push_scratch = heap.allocate_n<T>(kr::all_reduce_push_scratch_elems<T>(W, n));
  const auto host_in = to_t<T>(rank_data(rank, n, 1));
  KR_CHECK(cudaMemcpy(in, host_in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const auto want = reference_sum<T>(W, n, 0, n, 1);
  const bool ce_ok = (n * sizeof(T)) % 16 == 0;
  for (int variant = 0; variant < 8; ++variant) {
    if (variant == 2 && !ce_ok) continue;
    for (int rep = 0; rep < 3; ++rep) {  // back to back: the barriers must keep the ranks in step
      KR_CHECK(cudaMemset(out, 0xff, n * sizeof(T)));  // poison: NaN in bf16 and float
      heap.barrier();  // no peer pushes into my output (two-shot) while it is being poisoned
      kr::launch_params wide;  // all sources' loads in flight together
      wide.unroll = variant % 2 == 0 ? 4 : 8;
      wide.threads = variant % 2 == 0 ? 512 : 256;
      if (variant == 0) KR_CHECK(kr::all_reduce(heap.comm(), in, out, n, nullptr, kr::all_reduce_algo::one_shot));
      if (variant == 1) KR_CHECK(kr::all_reduce(heap.comm(), in, out, n, nullptr, kr::all_reduce_algo::two_shot));
      if (variant == 2)
        KR_CHECK(kr::ce_all_reduce(heap.comm(), ce, in, out, scratch, n, nullptr, std::size_t(1) << 20));
      if (variant == 3) KR_CHECK(kr::all_reduce_push(heap.comm(), in, out, push_scratch, n, nullptr));
      if (variant >= 4)
        KR_CHECK(kr::all_reduce(heap.comm(), in, out, n, nullptr,
                                variant < 6 ? kr::all_reduce_algo::one_shot : kr::all_reduce_algo::two_shot, wide));
      KR_CHECK(cudaDeviceSynchronize());
      static const char* names[] = {"one-shot all-reduce",    "two-shot all-reduce",
                                    "copy-engine all-reduce", "push all-reduce",
                                    "one-shot all-reduce (unroll 4)", "one-shot all-reduce (unroll 8)",
                                    "two-shot all-reduce (unroll 4)", "two-shot all-reduce (unroll 8)"};
      if (compare(rank, names[variant], n, out, want) != 0) return 1;
    }
  }
  KR_CHECK(cudaFree(scratch));
  return 0;
}

int check_reduce_scatter(kr::host::symmetric_heap& heap, std::size_t n) {
  const int W = heap.world(), rank = heap.rank();
  auto* in = heap.allocate_n<bf16>(n * W);
  bf16* out = nullptr;
  KR_CHECK(cudaMalloc(&out, n * sizeof(bf16)));
  const auto host_in = to_t<bf16>(rank_data(rank, n * W, 2));
  KR_CHECK(cudaMemcpy(in, host_in.data(), n * W * sizeof(bf16), cudaMemcpyHostToDevice));
  const auto want = reference_sum<bf16>(W, n * W, n * rank, n, 2);
  for (int rep = 0; rep < 4; ++rep) {
    kr::launch_params p;  // the default, then all sources' loads in flight together
    p.unroll = rep < 2 ? 0 : rep == 2 ? 4 : 8;
    p.threads = rep == 3 ? 256 : 512;
    KR_CHECK(cudaMemset(out, 0xff, n * sizeof(bf16)));
    KR_CHECK(kr::reduce_scatter(heap.comm(), in, out, n, nullptr, p));
    KR_CHECK(cudaDeviceSynchronize());
    if (compare(rank, p.unroll ? "reduce-scatter (unrolled)" : "reduce-scatter", n, out, want) != 0) return 1;
  }
  KR_CHECK(cudaFree(out));
  return 0;
}

std::vector<std::uint8_t> rank_bytes(int rank, std::size_t n, unsigned salt) {
  std::mt19937 gen(99u + 31u * unsigned(rank) + salt);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = std::uint8_t(gen());
  return v;
}

int check_all_gather(kr::host::symmetric_heap& heap, const kr::copy_engines& ce, std::size_t bytes) {
  const int W = heap.world(), rank = heap.rank();
  auto* in = heap.allocate_n<std::uint8_t>(bytes);
  auto* out = heap.allocate_n<std::uint8_t>(bytes * W);
  const auto mine = rank_bytes(rank, bytes, 3);
  KR_CHECK(cudaMemcpy(in, mine.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<std::uint8_t> want;
  for (int r = 0; r < W; ++r) {
    const auto d = rank_bytes(r, bytes, 3);
    want.insert(want.end(), d.begin(), d.end());
  }
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 1 && bytes % 16 != 0) continue;
    KR_CHECK(cudaMemset(out, 0xa5, bytes * W));
    heap.barrier();  // nobody's copy engine writes into a buffer still being poisoned
    if (variant == 0) KR_CHECK(kr::all_gather(heap.comm(), in, out, bytes, nullptr));
    if (variant == 1) KR_CHECK(kr::ce_all_gather(heap.comm(), ce, in, out, bytes, nullptr));
    KR_CHECK(cudaDeviceSynchronize());
    if (compare(rank, variant == 0 ? "all-gather" : "copy-engine all-gather", bytes, out, want) != 0) return 1;
  }
  return 0;
}

int check_all_to_all(kr::host::symmetric_heap& heap, const kr::copy_engines& ce, std::size_t bytes) {
  const int W = heap.world(), rank = heap.rank();
  auto* in = heap.allocate_n<std::uint8_t>(bytes * W);
  auto* out = heap.allocate_n<std::uint8_t>(bytes * W);
  const auto mine = rank_bytes(rank, bytes * W, 4);
  KR_CHECK(cudaMemcpy(in, mine.data(), bytes * W, cudaMemcpyHostToDevice));
  std::vector<std::uint8_t> want;
  for (int s = 0; s < W; ++s) {
    const auto d = rank_bytes(s, bytes * W, 4);
    want.insert(want.end(), d.begin() + std::ptrdiff_t(bytes * rank), d.begin() + std::ptrdiff_t(bytes * (rank + 1)));
  }
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 1 && bytes % 16 != 0) continue;
    KR_CHECK(cudaMemset(out, 0xa5, bytes * W));
    heap.barrier();
    if (variant == 0) KR_CHECK(kr::all_to_all(heap.comm(), in, out, bytes, nullptr));
    if (variant == 1) KR_CHECK(kr::ce_all_to_all(heap.comm(), ce, in, out, bytes, nullptr));
    KR_CHECK(cudaDeviceSynchronize());
    if (compare(rank, variant == 0 ? "all-to-all" : "copy-engine all-to-all", bytes, out, want) != 0) return 1;
  }
  return 0;
}

int check_all_to_all_v(kr::host::symmetric_heap& heap, std::size_t max_count) {
  const int W = heap.world(), rank = heap.rank();
  std::mt19937 gen(4242u + unsigned(max_count));  // the same matrix on every rank
  std::vector<std::int64_t> splits(std::size_t(W) * W);
  for (auto& s : splits) s = std::int64_t(gen() % (max_count + 1));
  auto sent = [&](int s) {
    std::int64_t t = 0;
    for (int d = 0; d < W; ++d) t += splits[s * W + d];
    return std::size_t(t);
  };
  std::size_t max_sent = 0;
  for (int s = 0; s < W; ++s) max_sent = std::max(max_sent, sent(s));
  auto* in = heap.allocate_n<float>(std::max<std::size_t>(max_sent, 1));
  float* out = nullptr;
  std::int64_t* splits_dev = nullptr;
  KR_CHECK(cudaMalloc(&out, std::max<std::size_t>(W * max_count, 1) * sizeof(float)));
  KR_CHECK(cudaMalloc(&splits_dev, splits.size() * sizeof(std::int64_t)));
  KR_CHECK(cudaMemcpy(splits_dev, splits.data(), splits.size() * 8, cudaMemcpyHostToDevice));
  const auto mine = rank_data(rank, sent(rank), 5);
  KR_CHECK(cudaMemcpy(in, mine.data(), mine.size() * 4, cudaMemcpyHostToDevice));
  std::vector<float> want;
  for (int s = 0; s < W; ++s) {
    const auto d = rank_data(s, sent(s), 5);
    std::size_t off = 0;
    for (int j = 0; j < rank; ++j) off += std::size_t(splits[s * W + j]);
    want.insert(want.end(), d.begin() + std::ptrdiff_t(off), d.begin() + std::ptrdiff_t(off + splits[s * W + rank]));
  }
  KR_CHECK(kr::all_to_all_v(heap.comm(), in, out, splits_dev, sizeof(float), max_count * sizeof(float), nullptr));
  KR_CHECK(cudaDeviceSynchronize());
  return compare(rank, "all-to-all-v", max_count, out, want);
}

int check_rooted(kr::host::symmetric_heap& heap, std::size_t n) {
  const int W = heap.world(), rank = heap.rank(), root = W - 1;
  auto* in = heap.allocate_n<bf16>(n * W);
  bf16* out = nullptr;
  KR_CHECK(cudaMalloc(&out, n * W * sizeof(bf16)));
  const auto mine = to_t<bf16>(rank_data(rank, n * W, 6));
  KR_CHECK(cudaMemcpy(in, mine.data(), n * W * sizeof(bf16), cudaMemcpyHostToDevice));
  const auto from_root = to_t<bf16>(rank_data(root, n * W, 6));
  // broadcast: root's first n elements
  KR_CHECK(cudaMemset(out, 0xff, n * W * sizeof(bf16)));
  KR_CHECK(kr::rooted_copy(heap.comm(), kr::rooted_op::broadcast, in, out, n * sizeof(bf16), root, nullptr));
  KR_CHECK(cudaDeviceSynchronize());
  if (compare(rank, "broadcast", n, out, std::vector<bf16>(from_root.begin(), from_root.begin() + std::ptrdiff_t(n))))
    return 1;
  // scatter: block `rank` of root's input
  KR_CHECK(cudaMemset(out, 0xff, n * W * sizeof(bf16)));
  KR_CHECK(kr::rooted_copy(heap.comm(), kr::rooted_op::scatter, in, out, n * sizeof(bf16), root, nullptr));
  KR_CHECK(cudaDeviceSynchronize());
  if (compare(rank, "scatter", n, out,
              std::vector<bf16>(from_root.begin() + std::ptrdiff_t(n * rank), from_root.begin() + std::ptrdiff_t(n * (rank + 1)))))
    return 1;
  // gather and reduce: the root only; the others' out stays poisoned
  KR_CHECK(cudaMemset(out, 0xff, n * W * sizeof(bf16)));
  KR_CHECK(kr::rooted_copy(heap.comm(), kr::rooted_op::gather, in, out, n * sizeof(bf16), root, nullptr));
  KR_CHECK(cudaDeviceSynchronize());
  if (rank == root) {
    std::vector<bf16> want;
    for (int r = 0; r < W; ++r) {
      const auto d = to_t<bf16>(rank_data(r, n * W, 6));
      want.insert(want.end(), d.begin(), d.begin() + std::ptrdiff_t(n));
    }
    if (compare(rank, "gather", n, out, want)) return 1;
  }
  KR_CHECK(kr::reduce(heap.comm(), in, out, n, root, nullptr));
  KR_CHECK(cudaDeviceSynchronize());
  if (rank == root && compare(rank, "reduce", n, out, reference_sum<bf16>(W, n * W, 0, n, 6))) return 1;
  KR_CHECK(cudaFree(out));
  return 0;
}

void check_collectives(heap_backend backend) {
  on_every_rank(backend, std::size_t(1024) << 20, [](kr::host::symmetric_heap& heap) {
    kr::copy_engines ce(heap.world());
    for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(8192 + 3),
                          std::size_t(1) << 20, (std::size_t(6) << 20) + 8}) {
      if (check_all_reduce<bf16>(heap, ce, n) || check_all_reduce<float>(heap, ce, n)) return 1;
      if (check_reduce_scatter(heap, n)) return 1;
      if (check_all_gather(heap, ce, n * 2) || check_all_to_all(heap, ce, n * 2)) return 1;
      if (check_all_to_all_v(heap, n) || check_rooted(heap, n)) return 1;
    }
    return 0;
  });
}

TEST(kr_gpu, collectives_match_the_host_reference_on_the_vmm_heap) {
  REQUIRE_GPU();
  check_collectives(heap_backend::vmm);
}

TEST(kr_gpu, collectives_match_the_host_reference_on_the_legacy_ipc_heap) {
  REQUIRE_GPU();
  check_collectives(heap_backend::legacy_ipc);
}

}  // namespace

namespace {

// Small enough to run under compute-sanitizer (memcheck, racecheck) in seconds.
TEST(kr_gpu, all_reduce_building_blocks_small) {
  REQUIRE_GPU();
  on_every_rank(heap_backend::vmm, std::size_t(64) << 20, [](kr::host::symmetric_heap& heap) {
    kr::copy_engines ce(heap.world());
    for (std::size_t n : {std::size_t(7), std::size_t(8192 + 3), std::size_t(1) << 16})
      if (check_all_reduce<bf16>(heap, ce, n) || check_reduce_scatter(heap, n)) return 1;
    return 0;
  });
}

}  // namespace

namespace {

// Back to back with no host synchronisation and a different grid from call to call: the push
// all-reduce lets a peer run one call ahead (double-buffered scratch picked by the call epoch), so
// every call's output is kept and checked.
TEST(kr_gpu, push_all_reduces_back_to_back_with_changing_grids) {
  REQUIRE_GPU();
  on_every_rank(heap_backend::vmm, std::size_t(256) << 20, [](kr::host::symmetric_heap& heap) {
    const int W = heap.world(), rank = heap.rank(), calls = 120;
    const std::size_t n = (std::size_t(1) << 18) + 8;  // 512 KiB of bf16, plus one pack
    bf16* in[2];
    for (int k = 0; k < 2; ++k) {
      in[k] = heap.allocate_n<bf16>(n);
      const auto h = to_t<bf16>(rank_data(rank, n, 10 + unsigned(k)));
      KR_CHECK(cudaMemcpy(in[k], h.data(), n * sizeof(bf16), cudaMemcpyHostToDevice));
    }
    auto* push_scratch = heap.allocate_n<bf16>(kr::all_reduce_push_scratch_elems<bf16>(W, n));
    bf16* outs = nullptr;
    KR_CHECK(cudaMalloc(&outs, std::size_t(calls) * n * sizeof(bf16)));
    KR_CHECK(cudaMemset(outs, 0xff, std::size_t(calls) * n * sizeof(bf16)));
    cudaStream_t s;
    KR_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    heap.barrier();
    for (int k = 0; k < calls; ++k) {
      kr::launch_params p;
      p.blocks = 1 + (k * 37) % 264;  // the same sequence on every rank
      p.threads = k % 3 == 0 ? 256 : 512;
      KR_CHECK(kr::all_reduce_push(heap.comm(), in[k % 2], outs + std::size_t(k) * n, push_scratch, n, s, p));
    }
    KR_CHECK(cudaStreamSynchronize(s));
    const std::vector<bf16> want[2] = {reference_sum<bf16>(W, n, 0, n, 10), reference_sum<bf16>(W, n, 0, n, 11)};
    for (int k = 0; k < calls; ++k)
      if (compare(rank, "push all-reduce (back to back)", n, outs + std::size_t(k) * n, want[k % 2]) != 0)
        return fail(rank, "call %d of %d was wrong", k, calls);
    KR_CHECK(cudaStreamDestroy(s));
    KR_CHECK(cudaFree(outs));
    return 0;
  });
}

}  // namespace
