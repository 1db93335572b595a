// One rank of bench/comm: NCCL and kernels_runtime on the same buffers, both captured in CUDA
// graphs, every output checked against a reference computed on the GPU from the input formula.
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "comm_bench.h"
#include "kr/host/rendezvous.h"
#include "kr/host/symmetric_heap.h"
#include "kr/kr.cuh"

namespace pk::comm_bench {
namespace {

using bf16 = __nv_bfloat16;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(ncclResult_t e, const char* what) {
  if (e != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(e));
}
#define CK(expr) check((expr), #expr)

/// Input element j of rank r: a multiple of 1/128 in [-1, 1). Sums of a few of them are exact in
/// float, so the reference is exact whatever order an implementation adds in.
__host__ __device__ inline float gen(int r, std::size_t j, unsigned salt) {
  std::uint64_t h = (std::uint64_t(r) << 40) ^ j ^ (std::uint64_t(salt) << 52);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return float(int(h & 0xff)) / 128.0f - 1.0f;
}

__global__ void fill(bf16* x, std::size_t n, int rank, unsigned salt) {
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < n; j += std::size_t(gridDim.x) * blockDim.x)
    x[j] = __float2bfloat16(gen(rank, j, salt));
}

enum class op_kind { all_reduce, all_gather, reduce_scatter, all_to_all };

/// Counts output elements that differ from the formula (and NaNs); also the elements that differ
/// bitwise from `other` when given.
__global__ void verify(op_kind op, const bf16* out, std::size_t n_out, int rank, int world, unsigned salt,
                       const bf16* other, unsigned long long* bad, unsigned long long* differ) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n_out;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float want = 0;
    if (op == op_kind::all_reduce) {
      for (int r = 0; r < world; ++r) want += gen(r, i, salt);
    } else if (op == op_kind::reduce_scatter) {
      for (int r = 0; r < world; ++r) want += gen(r, std::size_t(rank) * n_out + i, salt);
    } else {
      const std::size_t m = n_out / world, s = i / m, k = i % m;
      want = op == op_kind::all_gather ? gen(int(s), k, salt) : gen(int(s), std::size_t(rank) * m + k, salt);
    }
    const float got = __bfloat162float(out[i]);
    if (!(got == __bfloat162float(__float2bfloat16(want)))) atomicAdd(bad, 1ull);
    if (other != nullptr && *reinterpret_cast<const unsigned short*>(&out[i]) !=
                                *reinterpret_cast<const unsigned short*>(&other[i]))
      atomicAdd(differ, 1ull);
  }
}

op_kind kind_of(const std::string& op) {
  if (op == "all_reduce") return op_kind::all_reduce;
  if (op == "all_gather") return op_kind::all_gather;
  if (op == "reduce_scatter") return op_kind::reduce_scatter;
  if (op == "all_to_all") return op_kind::all_to_all;
  throw std::runtime_error("unknown op '" + op + "' (all_reduce, all_gather, reduce_scatter, all_to_all)");
}

struct variant {
  std::string name;
  std::function<void(cudaStream_t)> launch;
};

class rank_bench {
 public:
  rank_bench(const config& cfg, int rank)
      : cfg_(cfg), rank_(rank), world_(cfg.world), host_(cfg.session + "h", rank, cfg.world) {
    CK(cudaSetDevice(rank));
    auto stage = [rank](const char* what) {
      std::fprintf(stderr, "rank %d: %s\n", rank, what);
      std::fflush(stderr);
    };
    stage("starting NCCL");
    ncclUniqueId id{};
    if (rank == 0) CK(ncclGetUniqueId(&id));
    auto got = host_.all_gather({reinterpret_cast<const std::byte*>(&id), rank == 0 ? sizeof(id) : 0});
    std::memcpy(&id, got[0].payload.data(), sizeof(id));
    CK(ncclCommInitRank(&nccl_, world_, id, rank));
    stage("NCCL ready, creating the symmetric heap");
    max_bytes_ = *std::max_element(cfg.sizes.begin(), cfg.sizes.end());
    push_elems_ = std::min(max_bytes_, push_max_bytes) / 2;
    kr::host::heap_options opt;
    opt.bytes = 2 * max_bytes_ + (std::size_t(16) << 20) + 2 * kr::all_reduce_push_scratch_elems<bf16>(world_, push_elems_);
    heap_ = std::make_unique<kr::host::symmetric_heap>(rank, cfg.session, rank, world_, opt);
    in_ = heap_->allocate_n<bf16>(max_bytes_ / 2, 4096);
    out_ = heap_->allocate_n<bf16>(max_bytes_ / 2, 4096);
    push_scratch_ = heap_->allocate_n<bf16>(kr::all_reduce_push_scratch_elems<bf16>(world_, push_elems_), 4096);
    CK(cudaMalloc(&scratch_, max_bytes_ * std::size_t(world_ > 1 ? world_ - 1 : 1)));  // copy-engine landing zone
    CK(cudaMalloc(&nccl_out_, max_bytes_));
    CK(cudaMalloc(&nccl_in_, max_bytes_));
    CK(cudaMalloc(&counters_, 2 * sizeof(unsigned long long)));
    CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CK(cudaEventCreate(&start_));
    CK(cudaEventCreate(&stop_));
    ce_ = std::make_unique<kr::copy_engines>(world_);
    stage("ready");
  }
  ~rank_bench() {
    cudaDeviceSynchronize();
    ce_.reset();
    cudaFree(nccl_out_);
    cudaFree(nccl_in_);
    cudaFree(scratch_);
    cudaFree(counters_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
    ncclCommDestroy(nccl_);
    heap_.reset();
  }

  std::vector<result> run() {
    std::vector<result> all;
    unsigned salt = 1;
    for (const auto& op : cfg_.ops)
      for (std::size_t bytes : cfg_.sizes) {
        if (bytes % (16 * std::size_t(world_)) != 0) continue;  // whole 16-byte packs per rank
        measure(op, bytes, salt++, all);
      }
    return all;
  }

 private:
  /// Input and output element counts of `op` for a message of `bytes` (the nccl-tests sizes).
  std::pair<std::size_t, std::size_t> counts(op_kind k, std::size_t bytes) const {
    const std::size_t n = bytes / sizeof(bf16), W = std::size_t(world_);
    switch (k) {
      case op_kind::all_gather: return {n / W, n};
      case op_kind::reduce_scatter: return {n, n / W};
      default: return {n, n};
    }
  }

  std::vector<variant> variants(op_kind k, std::size_t bytes) {
    const kr::comm c = heap_->comm();
    auto [n_in, n_out] = counts(k, bytes);
    std::vector<variant> v;
    struct shape {
      const char* tag;
      int threads, cap;
    };
    std::vector<shape> shapes = {{"", 512, 264}};
    if (cfg_.sweep) shapes.insert(shapes.end(), {{"-t512x132", 512, 132}, {"-t256x528", 256, 528}, {"-t512x528", 512, 528}});
    for (const auto& s : shapes) {
      kr::launch_params p;
      p.threads = s.threads;
      p.max_blocks_auto = s.cap;
      const std::string tag = s.tag;
      switch (k) {
        case op_kind::all_reduce:
          v.push_back({"oneshot" + tag, [=, this](cudaStream_t st) {
                         CK(kr::all_reduce(c, in_, out_, n_in, st, kr::all_reduce_algo::one_shot, p));
                       }});
          v.push_back({"twoshot" + tag, [=, this](cudaStream_t st) {
                         CK(kr::all_reduce(c, in_, out_, n_in, st, kr::all_reduce_algo::two_shot, p));
                       }});
          if (bytes <= push_max_bytes) {
            v.push_back({"push" + tag, [=, this](cudaStream_t st) {
                           CK(kr::all_reduce_push(c, in_, out_, push_scratch_, n_in, st, p));
                         }});
          }
          break;
        case op_kind::all_gather:
          v.push_back({"sm" + tag, [=, this](cudaStream_t st) { CK(kr::all_gather(c, in_, out_, n_in * 2, st, p)); }});
          break;
        case op_kind::reduce_scatter:
          v.push_back({"sm" + tag, [=, this](cudaStream_t st) { CK(kr::reduce_scatter(c, in_, out_, n_out, st, p)); }});
          break;
        case op_kind::all_to_all:
          v.push_back({"sm" + tag, [=, this](cudaStream_t st) {
                         CK(kr::all_to_all(c, in_, out_, n_in * 2 / world_, st, p));
                       }});
          break;
      }
    }
    // All-reduce and reduce-scatter with every source's loads in flight together.
    struct wide_shape {
      const char* tag;
      int threads, cap, unroll;
    };
    std::vector<wide_shape> wide = {{"-u4", 512, 264, 4}};
    if (cfg_.sweep)
      wide.insert(wide.end(), {{"-u4-t512x132", 512, 132, 4}, {"-u8-t256x132", 256, 132, 8}, {"-u8-t256x264", 256, 264, 8}});
    for (const auto& w : wide) {
      kr::launch_params p;
      p.threads = w.threads;
      p.max_blocks_auto = w.cap;
      p.unroll = w.unroll;
      if (k == op_kind::all_reduce)
        for (auto algo : {kr::all_reduce_algo::one_shot, kr::all_reduce_algo::two_shot})
          v.push_back({std::string(algo == kr::all_reduce_algo::one_shot ? "oneshot" : "twoshot") + w.tag,
                       [=, this](cudaStream_t st) { CK(kr::all_reduce(c, in_, out_, n_in, st, algo, p)); }});
      if (k == op_kind::reduce_scatter)
        v.push_back({std::string("sm") + w.tag,
                     [=, this](cudaStream_t st) { CK(kr::reduce_scatter(c, in_, out_, n_out, st, p)); }});
    }
    if (bytes >= (std::size_t(1) << 20)) {
      auto chunk_tag = [](std::size_t chunk) { return "-c" + std::to_string(chunk >> 20) + "M"; };
      switch (k) {
        case op_kind::all_reduce:
          for (std::size_t chunk : {std::size_t(16) << 20, std::size_t(64) << 20}) {
            if (!cfg_.sweep && chunk != (std::size_t(16) << 20)) continue;
            v.push_back({"ce" + chunk_tag(chunk), [=, this](cudaStream_t st) {
                           CK(kr::ce_all_reduce(c, *ce_, in_, out_, scratch_, n_in, st, chunk));
                         }});
          }
          break;
        case op_kind::all_gather:
          v.push_back({"ce", [=, this](cudaStream_t st) { CK(kr::ce_all_gather(c, *ce_, in_, out_, n_in * 2, st)); }});
          break;
        case op_kind::all_to_all:
          v.push_back({"ce", [=, this](cudaStream_t st) {
                         CK(kr::ce_all_to_all(c, *ce_, in_, out_, n_in * 2 / world_, st));
                       }});
          break;
        default: break;
      }
    }
    std::erase_if(v, [this](const variant& x) {
      return std::any_of(cfg_.skip.begin(), cfg_.skip.end(),
                         [&](const std::string& s) { return x.name.find(s) != std::string::npos; });
    });
    return v;
  }

  void nccl_call(op_kind k, std::size_t bytes, cudaStream_t st) {
    auto [n_in, n_out] = counts(k, bytes);
    switch (k) {
      case op_kind::all_reduce: CK(ncclAllReduce(nccl_in_, nccl_out_, n_in, ncclBfloat16, ncclSum, nccl_, st)); break;
      case op_kind::all_gather: CK(ncclAllGather(nccl_in_, nccl_out_, n_in, ncclBfloat16, nccl_, st)); break;
      case op_kind::reduce_scatter: CK(ncclReduceScatter(nccl_in_, nccl_out_, n_out, ncclBfloat16, ncclSum, nccl_, st)); break;
      case op_kind::all_to_all: {
        const std::size_t m = n_in / world_;
        CK(ncclGroupStart());
        for (int p = 0; p < world_; ++p) {
          CK(ncclSend(nccl_in_ + std::size_t(p) * m, m, ncclBfloat16, p, nccl_, st));
          CK(ncclRecv(nccl_out_ + std::size_t(p) * m, m, ncclBfloat16, p, nccl_, st));
        }
        CK(ncclGroupEnd());
        break;
      }
    }
  }

  /// Checks `out` against the formula (and against NCCL's output when other != nullptr);
  /// returns (wrong elements, elements differing from other), summed over ranks.
  std::pair<std::size_t, std::size_t> verify_output(op_kind k, const bf16* out, std::size_t n_out, unsigned salt,
                                                    const bf16* other) {
    CK(cudaMemsetAsync(counters_, 0, 2 * sizeof(unsigned long long), stream_));
    verify<<<264, 512, 0, stream_>>>(k, out, n_out, rank_, world_, salt, other, counters_, counters_ + 1);
    CK(cudaGetLastError());
    unsigned long long h[2];
    CK(cudaMemcpyAsync(h, counters_, sizeof(h), cudaMemcpyDeviceToHost, stream_));
    CK(cudaStreamSynchronize(stream_));
    std::size_t sums[2] = {0, 0};
    for (const auto& m : host_.all_gather({reinterpret_cast<const std::byte*>(h), sizeof(h)})) {
      unsigned long long v[2];
      std::memcpy(v, m.payload.data(), sizeof(v));
      sums[0] += v[0];
      sums[1] += v[1];
    }
    return {sums[0], sums[1]};
  }

  /// Per-call time in microseconds (max over ranks) of `calls` back to back, captured in a graph.
  double time_graph(const std::function<void(cudaStream_t)>& call, std::size_t bytes) {
    const int per_graph = int(std::clamp<std::size_t>((std::size_t(128) << 20) / bytes, 2, 50));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < per_graph; ++i) call(stream_);
    CK(cudaStreamEndCapture(stream_, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    host_.barrier();
    CK(cudaGraphLaunch(exec, stream_));  // warm-up
    CK(cudaStreamSynchronize(stream_));
    host_.barrier();
    CK(cudaEventRecord(start_, stream_));
    for (int r = 0; r < cfg_.replays; ++r) CK(cudaGraphLaunch(exec, stream_));
    CK(cudaEventRecord(stop_, stream_));
    CK(cudaStreamSynchronize(stream_));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start_, stop_));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    double us = double(ms) * 1000.0 / (double(cfg_.replays) * per_graph);
    for (const auto& m : host_.all_gather({reinterpret_cast<const std::byte*>(&us), sizeof(us)})) {
      double v;
      std::memcpy(&v, m.payload.data(), sizeof(v));
      us = std::max(us, v);
    }
    return us;
  }

  void measure(const std::string& op, std::size_t bytes, unsigned salt, std::vector<result>& all) {
    const op_kind k = kind_of(op);
    auto [n_in, n_out] = counts(k, bytes);
    fill<<<264, 512, 0, stream_>>>(in_, n_in, rank_, salt);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(nccl_in_, in_, n_in * 2, cudaMemcpyDeviceToDevice, stream_));
    CK(cudaMemsetAsync(nccl_out_, 0xff, n_out * 2, stream_));
    nccl_call(k, bytes, stream_);
    CK(cudaStreamSynchronize(stream_));
    const double factor = bus_factor(op, world_);
    auto add = [&](const std::string& impl, double us, std::size_t bad, bool same) {
      result r;
      r.op = op;
      r.impl = impl;
      r.bytes = bytes;
      r.time_us = us;
      r.algbw_gbs = double(bytes) / (us * 1e-6) / 1e9;
      r.busbw_gbs = r.algbw_gbs * factor;
      r.mismatches = bad;
      r.bitwise_equal = same;
      all.push_back(r);
      if (rank_ == 0) {
        std::fprintf(stderr, "  %-15s %10zu B  %-20s %10.2f us %8.1f GB/s busbw  %s\n", op.c_str(), bytes, impl.c_str(),
                     us, r.busbw_gbs, bad == 0 ? "correct" : "WRONG");
        std::fflush(stderr);
      }
    };
    auto [nccl_bad, unused] = verify_output(k, nccl_out_, n_out, salt, nullptr);
    (void)unused;
    const double nccl_us = time_graph([&](cudaStream_t st) { nccl_call(k, bytes, st); }, bytes);
    add("nccl", nccl_us, nccl_bad, true);
    for (const auto& v : variants(k, bytes)) {
      CK(cudaMemsetAsync(out_, 0xff, n_out * 2, stream_));
      CK(cudaStreamSynchronize(stream_));
      host_.barrier();  // nobody's kernel writes into a peer's output while it is being poisoned
      v.launch(stream_);
      auto [bad, differ] = verify_output(k, out_, n_out, salt, nccl_out_);
      const double us = time_graph(v.launch, bytes);
      auto [bad_after, differ_after] = verify_output(k, out_, n_out, salt, nccl_out_);  // after many replays
      add("kr:" + v.name, us, bad + bad_after, differ == 0 && differ_after == 0);
    }
  }

  config cfg_;
  int rank_, world_;
  kr::host::rendezvous host_;
  ncclComm_t nccl_ = nullptr;
  std::size_t max_bytes_ = 0;
  std::unique_ptr<kr::host::symmetric_heap> heap_;
  std::unique_ptr<kr::copy_engines> ce_;
  /// The SM push all-reduce is timed up to this size (its scratch is twice the message).
  static constexpr std::size_t push_max_bytes = std::size_t(64) << 20;
  std::size_t push_elems_ = 0;
  bf16 *in_ = nullptr, *out_ = nullptr, *nccl_in_ = nullptr, *nccl_out_ = nullptr, *scratch_ = nullptr;
  bf16* push_scratch_ = nullptr;
  unsigned long long* counters_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

double bus_factor(const std::string& op, int n) {
  return op == "all_reduce" ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

std::vector<result> run_rank(const config& cfg, int rank) {
  rank_bench b(cfg, rank);
  return b.run();
}

}  // namespace pk::comm_bench
