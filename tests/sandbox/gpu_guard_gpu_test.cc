// The multicast guard on a real GPU host, on min(2, its GPUs): torch + NCCL all_reduce (with cuBLAS
// and Triton) works unchanged under it, in a bwrap GPU sandbox (/etc/ld.so.preload) and unsandboxed
// (gpu_guard_env's LD_PRELOAD), and the guard saw the driver lookups (its log), refused nothing, and
// is what cudart hands out for cuMulticastCreate. No multicast function is ever called.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "sandbox/gpu_devices.h"
#include "sandbox/gpu_guard.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::temp_dir;

const fs::path script = fs::path(PKAGENT_TEST_DATA) / "multicast_guard" / "nccl_under_guard.py";

class multicast_guard_gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/dev/nvidia0")) GTEST_SKIP() << "no GPU here: /dev/nvidia0 is absent";
    if (!PKAGENT_PYTHON[0]) GTEST_SKIP() << "no Python with torch configured (PKAGENT_PYTHON)";
    log = logs.path() / "guard.log";
    const auto host = host_gpu_indices();
    if (host.empty()) GTEST_SKIP() << "needs 1 GPU; the driver lists none";
    gpus.assign(host.begin(), host.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(host.size())));
  }

  // The evidence: lookups seen, nothing refused.
  void check_log(const std::string& output) {
    const guard_log evidence = read_guard_log(log);
    ASSERT_EQ(evidence.problem, "");
    std::cout << "guard log:\n";
    bool driver_lookup = false;
    for (const auto& e : evidence.events) {
      std::cout << "  " << e.line << "\n";
      driver_lookup |= e.event == "resolved" && e.entry.rfind("cuGetProcAddress", 0) == 0;
    }
    EXPECT_TRUE(driver_lookup) << "the guard saw no cuGetProcAddress lookup";
    EXPECT_TRUE(evidence.refusals().empty()) << describe_refusals(evidence.refusals()) << output;
  }

  temp_dir ws, logs;
  fs::path log;
  std::vector<int> gpus;  ///< the GPUs lent: two, or the only one of a one-GPU host
};

TEST_F(multicast_guard_gpu, torch_nccl_all_reduce_works_in_a_gpu_sandbox) {
  if (auto why = unavailable_reason()) GTEST_SKIP() << "no sandbox on this host: " << *why;
  spec s;
  s.workspace = ws.path();
  s.gpus = gpus;
  s.limits.wall = std::chrono::seconds(500);
  const fs::path prefix = fs::path(PKAGENT_PYTHON).parent_path().parent_path();
  s.binds = {guard_log_bind(log), {prefix, prefix, false}, {script.parent_path(), script.parent_path(), false}};
  const auto r = run(s, std::string(PKAGENT_PYTHON) + " " + script.string());
  std::cout << r.out.text;
  EXPECT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_NE(r.out.text.find("world " + std::to_string(gpus.size()) + "\n"), std::string::npos) << r.out.text;
  check_log(r.out.text + r.err.text);
}

TEST_F(multicast_guard_gpu, torch_nccl_all_reduce_works_unsandboxed_with_gpu_guard_env) {
  process_spec ps;
  ps.argv = {PKAGENT_PYTHON, script.string()};
  ps.env = host_environment();
  for (const auto& [k, v] : gpu_guard_env(log)) ps.env[k] = v;
  ps.env["CUDA_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(gpus, ","));
  ps.cwd = ws.path();
  ps.timeout = std::chrono::seconds(500);
  const auto r = run_process(ps);
  std::cout << r.out.text;
  EXPECT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_NE(r.out.text.find("world " + std::to_string(gpus.size()) + "\n"), std::string::npos) << r.out.text;
  check_log(r.out.text + r.err.text);
}

}  // namespace
}  // namespace pk::sandbox
