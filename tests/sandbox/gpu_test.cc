// GPU lending on a real GPU host: with --gpus 1 a CUDA program inside sees exactly one device,
// and its PCI bus id is the host's GPU 1 (as nvidia-smi outside reports it); with 0,1 two.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "sandbox/gpu_devices.h"
#include "sandbox/sandbox.h"
#include "temp_dir.h"

namespace pk::sandbox {
namespace {

using testing::temp_dir;

// Prints "count N" and one "bus <pci bus id>" line per visible device.
constexpr const char* probe_source = R"(#include <cstdio>
#include <cuda_runtime.h>
int main() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) { std::printf("error %s\n", cudaGetErrorString(e)); return 1; }
  std::printf("count %d\n", n);
  for (int i = 0; i < n; ++i) {
    char bus[32];
    cudaDeviceGetPCIBusId(bus, sizeof bus, i);
    std::printf("bus %s\n", bus);
  }
  return 0;
}
)";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The host's PCI bus id of GPU `index`, from nvidia-smi outside any sandbox.
std::string host_bus_id(int index) {
  const std::string cmd = "nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i " + std::to_string(index);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  char buf[128] = {};
  if (!pipe || !std::fgets(buf, sizeof buf, pipe.get())) return {};
  std::string bus = buf;
  while (!bus.empty() && std::isspace(static_cast<unsigned char>(bus.back()))) bus.pop_back();
  // nvidia-smi prints an 8-digit domain (00000000:07:00.0); CUDA a 4-digit one (0000:07:00.0).
  if (bus.size() > 12) bus = bus.substr(bus.size() - 12);
  return lower(bus);
}

class sandbox_gpu_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "no GPU here: /dev/nvidia0 is absent";
    if (auto why = unavailable_reason()) GTEST_SKIP() << "no sandbox on this host: " << *why;
    if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no nvcc at /usr/local/cuda/bin";
    s.workspace = ws.path();
    s.limits.wall = std::chrono::seconds(300);
    std::ofstream(ws.path() / "probe.cu") << probe_source;
    const auto built = run(s, "nvcc -o probe probe.cu");
    ASSERT_EQ(built.exit_code, 0) << built.err.text;
  }

  temp_dir ws;
  spec s;
};

TEST_F(sandbox_gpu_test, one_lent_gpu_is_the_only_device_and_it_is_host_gpu_1) {
  if (list_host_gpus().size() < 2) GTEST_SKIP() << "this host has fewer than 2 GPUs";
  s.gpus = {1};
  const auto r = run(s, "./probe; ls /dev | grep nvidia");
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  const std::string bus = host_bus_id(1);
  ASSERT_FALSE(bus.empty()) << "nvidia-smi gave no bus id for GPU 1";
  EXPECT_NE(r.out.text.find("count 1\n"), std::string::npos) << r.out.text;
  EXPECT_NE(lower(r.out.text).find("bus " + bus + "\n"), std::string::npos) << r.out.text << " host GPU 1: " << bus;
  EXPECT_EQ(r.out.text.find("nvidia0\n"), std::string::npos) << "host GPU 0's node is visible:\n" << r.out.text;
  std::printf("inside --gpus 1:\n%s(host GPU 1 is %s)\n", r.out.text.c_str(), bus.c_str());
}

TEST_F(sandbox_gpu_test, two_lent_gpus_are_two_devices) {
  if (list_host_gpus().size() < 2) GTEST_SKIP() << "this host has fewer than 2 GPUs";
  s.gpus = {0, 1};
  const auto r = run(s, "./probe");
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  EXPECT_NE(r.out.text.find("count 2\n"), std::string::npos) << r.out.text;
  EXPECT_NE(lower(r.out.text).find("bus " + host_bus_id(0) + "\nbus " + host_bus_id(1) + "\n"), std::string::npos)
      << r.out.text;
}

TEST_F(sandbox_gpu_test, without_gpus_cuda_finds_no_device) {
  const auto r = run(s, "./probe");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.text.find("error"), std::string::npos) << r.out.text;
}

}  // namespace
}  // namespace pk::sandbox
