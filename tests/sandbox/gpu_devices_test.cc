// The one GPU inventory: the host's GPUs from a fake driver tree (or, without one, the device
// nodes), and CUDA_VISIBLE_DEVICES read as CUDA reads it.
#include "sandbox/gpu_devices.h"

#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace pk::sandbox {
namespace {

using testing::temp_dir;

class gpu_devices_test : public ::testing::Test {
 protected:
  gpu_devices_test() { std::filesystem::create_directories(paths.dev); }
  void add_node(const char* name) { std::ofstream(paths.dev / name).put('\n'); }

  temp_dir fake;
  gpu_host_paths paths{fake.path() / "dev", fake.path() / "gpus"};
};

TEST_F(gpu_devices_test, numbers_the_driver_gpus_in_pci_order_with_their_minors_and_models) {
  // Minors swapped against PCI order, as the driver may number them.
  const std::pair<const char*, int> gpus[] = {{"0000:07:00.0", 0}, {"0000:05:00.0", 1}};
  for (auto [bus, minor] : gpus) {
    std::filesystem::create_directories(paths.driver_gpus / bus);
    std::ofstream(paths.driver_gpus / bus / "information")
        << "Model: \t\t NVIDIA H200\nIRQ:             123\nDevice Minor: \t " << minor << "\n";
  }
  const auto host = list_host_gpus(paths);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_EQ(host[0].index, 0);
  EXPECT_EQ(host[0].pci_bus, "0000:05:00.0");
  EXPECT_EQ(host[0].minor, 1);
  EXPECT_EQ(host[0].model, "NVIDIA H200");
  EXPECT_EQ(host[1].pci_bus, "0000:07:00.0");
  EXPECT_EQ(host[1].minor, 0);
  EXPECT_EQ(host_gpu_indices(paths), (std::vector<int>{0, 1}));
}

TEST_F(gpu_devices_test, without_driver_information_counts_the_numbered_device_nodes_only) {
  std::filesystem::create_directories(paths.dev / "nvidia-caps");
  for (const char* name : {"nvidia1", "nvidia0", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "null",
                           "nvidia1234", "nvidiax"})
    add_node(name);
  const auto host = list_host_gpus(paths);
  ASSERT_EQ(host.size(), 3u);
  EXPECT_EQ(host[2].index, 2);
  EXPECT_EQ(host[2].minor, 10) << "a gap in the minors is no gap in the indices";
  EXPECT_EQ(host[2].model, "");
  EXPECT_EQ(host_gpu_indices(paths), (std::vector<int>{0, 1, 2}));
  std::filesystem::remove_all(paths.dev);
  EXPECT_TRUE(list_host_gpus(paths).empty()) << "no driver and no nodes: no GPUs";
}

TEST(visible_gpu_count, narrows_the_host_gpus_as_cuda_reads_cuda_visible_devices) {
  EXPECT_EQ(visible_gpu_count(2, nullptr), 2) << "unset: every GPU";
  EXPECT_EQ(visible_gpu_count(2, ""), 0) << "empty: none";
  EXPECT_EQ(visible_gpu_count(2, "1,0"), 2);
  EXPECT_EQ(visible_gpu_count(2, " 1 "), 1);
  EXPECT_EQ(visible_gpu_count(4, "0,2,-1,1"), 2) << "an invalid entry hides itself and all after it";
  EXPECT_EQ(visible_gpu_count(2, "0,5,1"), 1) << "out of range";
  EXPECT_EQ(visible_gpu_count(2, "0,0"), 1) << "repeated";
  EXPECT_EQ(visible_gpu_count(2, "-1"), 0);
  EXPECT_EQ(visible_gpu_count(2, "GPU-8932f937,MIG-1a2b"), 2);
  EXPECT_EQ(visible_gpu_count(1, "0,1"), 1) << "never more than the host has";
  EXPECT_EQ(visible_gpu_count(0, "0"), 0);
}

}  // namespace
}  // namespace pk::sandbox
