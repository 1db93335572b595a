#include "agent/run/scheduler/host_gpus.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

TEST(detect_host_gpus, reads_the_numbered_device_nodes_only) {
  auto dev = fs::temp_directory_path() / ("pk_dev_" + std::to_string(::getpid()));
  fs::create_directories(dev / "nvidia-caps");
  for (const char* name : {"nvidia1", "nvidia0", "nvidia10", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "null"})
    std::ofstream(dev / name).put('\n');
  EXPECT_EQ(pk::scheduler::detect_host_gpus(dev), (std::vector<int>{0, 1, 10}));
  fs::remove_all(dev);
  EXPECT_TRUE(pk::scheduler::detect_host_gpus(dev).empty());  // a missing directory: no GPUs
}

}  // namespace
