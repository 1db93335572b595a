// guard_overhead: what the multicast guard costs a process that never touches multicast. Times,
// in this same binary run twice (plain, then with the guard preloaded as gpu_guard_env does):
//   dlsym of an ordinary driver name and of an ordinary libc name (the guard's dlsym compares a
//   character or two and hands over to libc as a tail call);
//   cuGetProcAddress_v2 of an ordinary name and cuDeviceGetAttribute of an ordinary attribute,
//   reached through the guard's wrappers (cudart, torch and NCCL fetch every driver function
//   through cuGetProcAddress once, at start-up);
//   the start of a process (/bin/true), which loads the guard first;
//   and the start of a bwrap sandbox with a GPU (its /etc rebuilt around the preload list) against
//   one without (the GPU is a fake device node where the host has none: the plan is the same).
// The driver is libcuda.so.1 (the real one on a GPU host; --driver names another, e.g. the tests'
// fake). Never calls a multicast function.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sandbox/environment.h"
#include "sandbox/gpu_guard.h"
#include "sandbox/plan.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;
namespace sb = pk::sandbox;

using get_proc_v2_fn = int (*)(const char*, void**, int, std::uint64_t, int*);
using attribute_fn = int (*)(int*, int, int);
using init_fn = int (*)(unsigned);
using device_get_fn = int (*)(int*, int);

// Best of `repeats` timings of `iterations` calls, in ns per call.
double ns_per_call(long iterations, int repeats, const std::function<void(long)>& body) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock_type::now();
    body(iterations);
    best = std::min(best, std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / iterations);
  }
  return best;
}

// The in-process timings of one run, as JSON on stdout.
int inner(const std::string& driver_path, long iterations) {
  void* driver = dlopen(driver_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    std::fprintf(stderr, "guard_overhead: cannot load %s: %s\n", driver_path.c_str(), dlerror());
    return 1;
  }
  auto get_proc = reinterpret_cast<get_proc_v2_fn>(dlsym(driver, "cuGetProcAddress_v2"));
  auto init = reinterpret_cast<init_fn>(dlsym(driver, "cuInit"));
  if (!get_proc || !init) {
    std::fprintf(stderr, "guard_overhead: %s exports no cuGetProcAddress_v2 or cuInit\n", driver_path.c_str());
    return 1;
  }
  json out;
  volatile std::uintptr_t sink = 0;
  out["dlsym_driver_ns"] = ns_per_call(iterations, 5, [&](long n) {
    for (long i = 0; i < n; ++i) sink = sink + reinterpret_cast<std::uintptr_t>(dlsym(driver, "cuDeviceGet"));
  });
  out["dlsym_libc_ns"] = ns_per_call(iterations, 5, [&](long n) {
    for (long i = 0; i < n; ++i) sink = sink + reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "malloc"));
  });
  out["cuGetProcAddress_v2_ns"] = ns_per_call(iterations, 5, [&](long n) {
    void* f = nullptr;
    int status = 0;
    for (long i = 0; i < n; ++i) {
      get_proc("cuDeviceGet", &f, 12000, 0, &status);
      sink = sink + reinterpret_cast<std::uintptr_t>(f);
    }
  });
  void* attribute = nullptr;
  void* device_get = nullptr;
  int status = 0, device = 0;
  get_proc("cuDeviceGetAttribute", &attribute, 2000, 0, &status);
  get_proc("cuDeviceGet", &device_get, 2000, 0, &status);
  if (init(0) == 0 && attribute && device_get && reinterpret_cast<device_get_fn>(device_get)(&device, 0) == 0) {
    out["cuDeviceGetAttribute_ns"] = ns_per_call(iterations, 5, [&](long n) {
      int value = 0;
      for (long i = 0; i < n; ++i) {
        reinterpret_cast<attribute_fn>(attribute)(&value, 16, device);  // multiprocessor count
        sink = sink + static_cast<std::uintptr_t>(value);
      }
    });
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

json run_inner(const std::string& self, const std::string& driver, long iterations, const sb::env_map& env) {
  sb::process_spec ps;
  ps.argv = {self, "--inner", "--driver", driver, "--iterations", std::to_string(iterations)};
  ps.env = env;
  ps.timeout = std::chrono::minutes(10);
  const auto r = sb::run_process(ps);
  if (r.exit_code != 0) throw std::runtime_error("the timing run failed: " + r.err.text);
  return json::parse(r.out.text);
}

double ms_per_start(int starts, const sb::env_map& env) {
  std::vector<double> ms;
  for (int i = 0; i < starts; ++i) {
    sb::process_spec ps;
    ps.argv = {"/bin/true"};
    ps.env = env;
    const auto t0 = clock_type::now();
    sb::run_process(ps);
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Median ms of a sandboxed `true` without and with a GPU, interleaved.
std::pair<double, double> sandbox_start_ms(int starts) {
  char pattern[] = "/tmp/pk-guard-overhead-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  sb::host_facts host = sb::host_facts::current();
  if (sb::list_host_gpus().empty()) {
    host.gpu_paths = {dir / "dev", dir / "gpus"};
    std::filesystem::create_directories(host.gpu_paths.dev);
    std::ofstream(host.gpu_paths.dev / "nvidia0");
  }
  std::filesystem::create_directories(dir / "ws");
  sb::spec plain;
  plain.workspace = dir / "ws";
  sb::spec gpu = plain;
  gpu.gpus = {0};
  const sb::plan plain_plan = sb::make_plan(plain, "true", host), gpu_plan = sb::make_plan(gpu, "true", host);
  std::vector<double> without, with;
  for (int i = 0; i < starts; ++i) {
    for (auto [s, p, out] : {std::tuple{&plain, &plain_plan, &without}, std::tuple{&gpu, &gpu_plan, &with}}) {
      const auto t0 = clock_type::now();
      if (sb::execute(*s, *p).exit_code != 0) throw std::runtime_error("a sandboxed `true` failed");
      out->push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    }
  }
  std::filesystem::remove_all(dir);
  for (auto* v : {&without, &with}) std::sort(v->begin(), v->end());
  return {without[without.size() / 2], with[with.size() / 2]};
}

int usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s [--driver LIBCUDA] [--iterations N] [--starts N] [--json FILE]\n"
               "Times dlsym, cuGetProcAddress_v2, cuDeviceGetAttribute (N calls each, default 1000000)\n"
               "and process starts (default 400) without and with the multicast guard preloaded.\n",
               self);
  return 2;
}

int measure(int argc, char** argv) {
  std::string driver = "libcuda.so.1", json_file;
  long iterations = 1'000'000;
  int starts = 400;
  bool inner_run = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--inner") {
      inner_run = true;
    } else if (arg == "--driver" && i + 1 < argc) {
      driver = argv[++i];
    } else if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::atol(argv[++i]);
    } else if (arg == "--starts" && i + 1 < argc) {
      starts = std::atoi(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_file = argv[++i];
    } else {
      return usage(argv[0]);
    }
  }
  if (iterations < 1 || starts < 1) return usage(argv[0]);
  if (inner_run) return inner(driver, iterations);

  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const sb::env_map plain = sb::host_environment();
  sb::env_map guarded = plain;
  for (const auto& [k, v] : sb::gpu_guard_env({})) guarded[k] = v;

  const json without = run_inner(self, driver, iterations, plain);
  const json with = run_inner(self, driver, iterations, guarded);
  json out = {{"driver", driver}, {"iterations", iterations}, {"without_guard", without}, {"with_guard", with}};
  fmt::print("{:<28} {:>14} {:>14} {:>14}\n", "per call", "without (ns)", "with (ns)", "added (ns)");
  for (const auto& [key, value] : without.items()) {
    if (!with.contains(key)) continue;
    const double a = value.get<double>(), b = with[key].get<double>();
    fmt::print("{:<28} {:>14.1f} {:>14.1f} {:>+14.1f}\n", key, a, b, b - a);
  }
  // Interleaved halves, so that load drifting on a shared host hits both alike.
  double start_plain = 0, start_guarded = 0;
  for (int half = 0; half < 2; ++half) {
    start_plain += ms_per_start(starts / 2 + 1, plain) / 2;
    start_guarded += ms_per_start(starts / 2 + 1, guarded) / 2;
  }
  out["process_start_ms"] = {{"without_guard", start_plain}, {"with_guard", start_guarded}};
  fmt::print("{:<28} {:>14.3f} {:>14.3f} {:>+14.3f}   (ms, median of {} starts of /bin/true)\n", "process start",
             start_plain, start_guarded, start_guarded - start_plain, starts);
  if (!sb::unavailable_reason()) {
    const auto [no_gpu, with_gpu] = sandbox_start_ms(std::max(starts / 4, 3));
    out["sandbox_start_ms"] = {{"without_gpu", no_gpu}, {"with_gpu", with_gpu}};
    fmt::print("{:<28} {:>14.3f} {:>14.3f} {:>+14.3f}   (ms, median of {} sandboxed `true`, no GPU vs one GPU)\n",
               "sandbox start", no_gpu, with_gpu, with_gpu - no_gpu, std::max(starts / 4, 3));
  }
  if (!json_file.empty()) std::ofstream(json_file) << out.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return measure(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "guard_overhead: %s\n", e.what());
    return 1;
  }
}
