// GPU lending on a real GPU host: lent one GPU, the host's last, a CUDA program inside sees exactly
// one device whose PCI bus id is that GPU's (as nvidia-smi outside reports it), and no other GPU's
// node; lent 0,1 (a host with 2 or more), two.
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

// The last rather than the first, so that on a host of several a wrong mapping (lending index 0
// whatever was asked) shows; on a host of one it is GPU 0.
TEST_F(sandbox_gpu_test, one_lent_gpu_is_the_only_device_and_it_is_the_last_host_gpu) {
  const auto host = list_host_gpus();
  if (host.empty()) GTEST_SKIP() << "needs 1 GPU; the driver lists none";
  const host_gpu& lent = host.back();
  s.gpus = {lent.index};
  const auto r = run(s, "./probe; ls /dev | grep nvidia");
  ASSERT_EQ(r.exit_code, 0) << r.out.text << r.err.text;
  const std::string bus = host_bus_id(lent.index);
  ASSERT_FALSE(bus.empty()) << "nvidia-smi gave no bus id for GPU " << lent.index;
  EXPECT_NE(r.out.text.find("count 1\n"), std::string::npos) << r.out.text;
  EXPECT_NE(lower(r.out.text).find("bus " + bus + "\n"), std::string::npos)
      << r.out.text << " host GPU " << lent.index << ": " << bus;
  EXPECT_NE(r.out.text.find("nvidia" + std::to_string(lent.minor) + "\n"), std::string::npos)
      << "the lent GPU's node is missing:\n" << r.out.text;
  for (const host_gpu& other : host) {
    if (other.index == lent.index) continue;
    EXPECT_EQ(r.out.text.find("nvidia" + std::to_string(other.minor) + "\n"), std::string::npos)
        << "host GPU " << other.index << "'s node is visible:\n" << r.out.text;
  }
  std::printf("inside --gpus %d:\n%s(host GPU %d is %s)\n", lent.index, r.out.text.c_str(), lent.index, bus.c_str());
}

TEST_F(sandbox_gpu_test, two_lent_gpus_are_two_devices) {
  if (const auto n = list_host_gpus().size(); n < 2) GTEST_SKIP() << "needs 2 GPUs; this host has " << n;
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
