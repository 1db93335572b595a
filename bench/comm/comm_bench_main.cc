// comm_bench: NCCL and kernels_runtime collectives side by side on all GPUs of this machine.
//
// One process per GPU (forked before any CUDA call), as torchrun runs PKB candidates: it is the
// setting kernels_runtime is built for, it exercises the real cross-process heap (cuMem handles
// passed over a Unix socket), and NCCL runs exactly as it does under torch. Rank 0 prints the
// table and writes the JSON; every number is the max over ranks of CUDA-graph replays.
#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "comm_bench.h"
#include "kr/host/rank_processes.h"
#include "kr/host/session_key.h"

namespace cb = pk::comm_bench;

namespace {

std::size_t parse_bytes(const std::string& s) {
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  const std::string unit = s.substr(pos);
  double mult = 1;
  if (unit == "K" || unit == "KB" || unit == "k") mult = 1024;
  else if (unit == "M" || unit == "MB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB") mult = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B") throw CLI::ValidationError("--sizes", "unknown unit in '" + s + "' (use K, M, G)");
  return std::size_t(v * mult);
}

std::string human(std::size_t b) {
  if (b >= (std::size_t(1) << 30)) return fmt::format("{}G", b >> 30);
  if (b >= (std::size_t(1) << 20)) return fmt::format("{}M", b >> 20);
  if (b >= 1024) return fmt::format("{}K", b >> 10);
  return fmt::format("{}B", b);
}

/// What kernels_runtime aims for on 2 x H200: op, bytes, at most this many microseconds.
struct target {
  const char* op;
  std::size_t bytes;
  double max_us;
};
const target targets[] = {
    {"all_reduce", std::size_t(256) << 10, 8.0},    {"all_reduce", std::size_t(4) << 20, 16.0},
    {"all_reduce", std::size_t(256) << 20, 740.0},  {"all_gather", std::size_t(256) << 20, 400.0},
    {"reduce_scatter", std::size_t(256) << 20, 400.0}, {"all_to_all", std::size_t(256) << 20, 380.0},
};

int gpu_count() {
  auto r = kr::host::run_rank_processes(
      1, [](int) { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0; }, std::chrono::seconds(60));
  return r[0].timed_out ? 0 : r[0].code;
}

int report(const cb::config& cfg, const std::vector<cb::result>& results, const std::string& json_path) {
  // Best kernels_runtime variant per (op, size), next to NCCL.
  std::map<std::pair<std::string, std::size_t>, const cb::result*> nccl, best;
  bool all_correct = true;
  for (const auto& r : results) {
    if (r.mismatches != 0) all_correct = false;
    auto key = std::make_pair(r.op, r.bytes);
    if (r.impl == "nccl")
      nccl[key] = &r;
    else if (r.mismatches == 0 && (!best.contains(key) || r.time_us < best[key]->time_us))
      best[key] = &r;
  }
  fmt::print("\n{:<15} {:>6} | {:>10} {:>8} | {:>10} {:>8} {:>8} {:<16} | {:>6} {}\n", "op", "size", "nccl us",
             "busbw", "kr us", "algbw", "busbw", "kr variant", "x nccl", "check");
  nlohmann::json summary = nlohmann::json::array();
  for (const auto& op : cfg.ops)
    for (std::size_t b : cfg.sizes) {
      auto key = std::make_pair(op, b);
      if (!nccl.contains(key)) continue;
      const auto* n = nccl[key];
      const auto* k = best.contains(key) ? best[key] : nullptr;
      const double ratio = k ? n->time_us / k->time_us : 0;
      fmt::print("{:<15} {:>6} | {:>10.1f} {:>8.1f} | {:>10.1f} {:>8.1f} {:>8.1f} {:<16} | {:>6.2f} {}\n", op, human(b),
                 n->time_us, n->busbw_gbs, k ? k->time_us : 0.0, k ? k->algbw_gbs : 0.0, k ? k->busbw_gbs : 0.0,
                 k ? k->impl : "none correct", ratio,
                 n->mismatches == 0 && k && k->bitwise_equal ? "ok (bitwise = nccl)" : (k ? "ok" : "FAIL"));
      summary.push_back({{"op", op}, {"bytes", b}, {"nccl_us", n->time_us}, {"nccl_busbw_gbs", n->busbw_gbs},
                         {"kr_us", k ? k->time_us : 0.0}, {"kr_variant", k ? k->impl : ""},
                         {"kr_busbw_gbs", k ? k->busbw_gbs : 0.0}, {"speedup_vs_nccl", ratio}});
    }
  nlohmann::json target_json = nlohmann::json::array();
  fmt::print("\ntargets (2 x H200):\n");
  for (const auto& t : targets) {
    auto key = std::make_pair(std::string(t.op), t.bytes);
    if (!best.contains(key)) continue;
    const double us = best[key]->time_us;
    const bool met = us <= t.max_us;
    fmt::print("  {:<15} {:>5}: {:>8.1f} us vs <= {:.1f} us: {} ({:+.1f}%), nccl {:.1f} us\n", t.op, human(t.bytes), us,
               t.max_us, met ? "MET" : "MISSED", (us / t.max_us - 1) * 100, nccl[key]->time_us);
    target_json.push_back({{"op", t.op}, {"bytes", t.bytes}, {"target_us", t.max_us}, {"kr_us", us},
                           {"kr_variant", best[key]->impl}, {"nccl_us", nccl[key]->time_us}, {"met", met}});
  }
  if (!json_path.empty()) {
    nlohmann::json j;
    j["world"] = cfg.world;
    j["replays"] = cfg.replays;
    j["method"] = "one process per GPU; per call = (graph of N back-to-back calls) x replays, events, max over ranks";
    j["summary"] = summary;
    j["targets"] = target_json;
    for (const auto& r : results)
      j["results"].push_back({{"op", r.op}, {"impl", r.impl}, {"bytes", r.bytes}, {"time_us", r.time_us},
                              {"algbw_gbs", r.algbw_gbs}, {"busbw_gbs", r.busbw_gbs}, {"mismatches", r.mismatches},
                              {"bitwise_equal_to_nccl", r.bitwise_equal}});
    std::ofstream(json_path) << j.dump(2) << "\n";
    fmt::print("\nwrote {}\n", json_path);
  }
  if (!all_correct) fmt::print("\nSOME RESULTS WERE WRONG: see the mismatches in the JSON\n");
  return all_correct ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"comm_bench: NCCL vs kernels_runtime collectives on all GPUs of this machine (bf16, CUDA graphs)"};
  cb::config cfg;
  std::string sizes = "32K,64K,128K,256K,512K,1M,4M,16M,64M,256M,1G";
  std::string ops = "all_reduce,all_gather,reduce_scatter,all_to_all";
  std::string json_path, skip;
  int timeout_s = 900;
  app.add_option("--world", cfg.world, "GPUs to use (default: all)");
  app.add_option("--sizes", sizes, "comma-separated message sizes (AR: buffer, AG: output, RS: input, A2A: per rank)")
      ->capture_default_str();
  app.add_option("--ops", ops, "comma-separated collectives")->capture_default_str();
  app.add_option("--replays", cfg.replays, "timed graph replays per measurement")->capture_default_str();
  app.add_flag("!--no-sweep", cfg.sweep, "time only the default kernels_runtime launch shapes");
  app.add_option("--json", json_path, "write all results as JSON here");
  app.add_option("--skip", skip, "comma-separated: leave out kernels_runtime variants whose name contains one");
  app.add_option("--timeout", timeout_s, "seconds before the rank processes are killed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t a = 0;
    while (a <= s.size()) {
      const std::size_t b = std::min(s.find(',', a), s.size());
      if (b > a) out.push_back(s.substr(a, b - a));
      a = b + 1;
    }
    return out;
  };
  try {
    for (const auto& s : split(sizes)) cfg.sizes.push_back(parse_bytes(s));
  } catch (const std::exception& e) {
    fmt::print(stderr, "comm_bench: bad --sizes '{}': {}\n", sizes, e.what());
    return 2;
  }
  cfg.ops = split(ops);
  cfg.skip = split(skip);
  const int gpus = gpu_count();
  // Never ranks sharing a GPU: NCCL refuses two ranks on one device, and the GPU would time-slice
  // them, so their timings would mean nothing. kr_gpu_test checks co-located ranks' results.
  constexpr const char* why_one_per_gpu =
      "one rank per GPU: NCCL refuses two ranks on one GPU, and ranks sharing a GPU are time-sliced, so their "
      "timings would mean nothing (kr_gpu_test checks kernels_runtime's results with ranks sharing a GPU)";
  if (gpus < 2) {
    fmt::print(stderr, "comm_bench: needs 2 or more GPUs, found {}; it times {}\n", gpus, why_one_per_gpu);
    return 2;
  }
  if (cfg.world == 0) cfg.world = gpus;
  if (cfg.world < 2 || cfg.world > gpus) {
    fmt::print(stderr, "comm_bench: --world {} but this machine has {} GPUs; use 2 to {}, {}\n", cfg.world, gpus, gpus,
               why_one_per_gpu);
    return 2;
  }
  cfg.session = kr::host::random_session_key();
  fmt::print("comm_bench: {} GPUs, one process each; NCCL_NVLS_ENABLE={}\n", cfg.world,
             std::getenv("NCCL_NVLS_ENABLE") ? std::getenv("NCCL_NVLS_ENABLE") : "(unset)");
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  auto exits = kr::host::run_rank_processes(
      cfg.world,
      [&](int rank) {
        auto results = cb::run_rank(cfg, rank);
        return rank == 0 ? report(cfg, results, json_path) : 0;
      },
      std::chrono::seconds(timeout_s));
  fmt::print("comm_bench: {:.1f} s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  int rc = 0;
  for (int r = 0; r < cfg.world; ++r) {
    if (exits[r].timed_out) fmt::print(stderr, "comm_bench: rank {} timed out after {} s\n", r, timeout_s);
    if (exits[r].code != 0) rc = exits[r].code;
  }
  return rc;
}
