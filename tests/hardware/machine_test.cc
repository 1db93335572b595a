// The machine an episode runs on: `nvidia-smi topo -m` parsed from text in the driver's layout (1 and 8
// H200s on NVLink, a PCIe box with NVLink pairs), the links among the GPUs leases draw from, and the
// hardware spec chosen for bounds only when its GPU model and count match.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/suite/machine.h"
#include "config/read_file.h"
#include "sandbox/gpu_topology.h"

namespace {

namespace fs = std::filesystem;
using pk::bench::describe_machine;
using pk::bench::device_kind;
using pk::bench::hardware_spec_dir;
using pk::sandbox::describe_links;
using pk::sandbox::gpu_topology;
using pk::sandbox::host_gpu;
using pk::sandbox::parse_gpu_topology;

gpu_topology topo(const std::string& name) {
  return parse_gpu_topology(pk::read_file(fs::path(PKAGENT_TEST_DATA) / "topo" / name));
}

std::vector<host_gpu> h200s(int n) {
  std::vector<host_gpu> gpus;
  for (int i = 0; i < n; ++i) gpus.push_back({i, i, fmt::format("0000:{:02x}:00.0", i + 0x18), "NVIDIA H200"});
  return gpus;
}

TEST(gpu_topology, one_h200_has_no_links) {
  const auto t = topo("h200x1.txt");
  EXPECT_EQ(t.gpu_count, 1);
  EXPECT_TRUE(t.links.empty());
  EXPECT_EQ(describe_links(t, {0}), "");
}

TEST(gpu_topology, eight_h200s_are_all_nv18_and_nics_are_left_out) {
  const auto t = topo("h200x8.txt");
  EXPECT_EQ(t.gpu_count, 8);
  EXPECT_EQ(t.links.size(), 28u);  // every pair once, no NIC column or row
  for (const auto& [pair, link] : t.links) EXPECT_EQ(link, "NV18") << pair.first << "-" << pair.second;
  EXPECT_EQ(describe_links(t, {0, 1, 2, 3, 4, 5, 6, 7}), "NV18");
  EXPECT_EQ(describe_links(t, {6, 2}), "NV18");
}

TEST(gpu_topology, mixed_links_are_named_with_their_pairs) {
  const auto t = topo("pcie_nvlink_pairs_x4.txt");
  EXPECT_EQ(t.gpu_count, 4);
  EXPECT_EQ(describe_links(t, {0, 1}), "NV4");
  EXPECT_EQ(describe_links(t, {0, 1, 2}), "NV4 (0-1), SYS (0-2, 1-2)");
}

TEST(gpu_topology, text_without_a_matrix_gives_no_gpus) {
  const auto t = parse_gpu_topology(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
      "NVIDIA driver is installed and running.\n");
  EXPECT_EQ(t.gpu_count, 0);
  EXPECT_EQ(describe_links(t, {0, 1}), "unknown");
  EXPECT_EQ(parse_gpu_topology("").gpu_count, 0);
}

TEST(machine, a_spec_matches_by_model_and_count) {
  const auto h200x2 = pk::bench::load_hardware_spec(hardware_spec_dir() / "h200x2.toml");
  EXPECT_TRUE(pk::bench::spec_matches(h200x2, "NVIDIA H200", 2));
  EXPECT_TRUE(pk::bench::spec_matches(h200x2, "nvidia h200", 2));
  EXPECT_FALSE(pk::bench::spec_matches(h200x2, "NVIDIA H200", 1));
  EXPECT_FALSE(pk::bench::spec_matches(h200x2, "NVIDIA H200 NVL", 2));
  EXPECT_FALSE(pk::bench::spec_matches(h200x2, "", 2));
  // The spec's note in parentheses is not part of the driver's name.
  EXPECT_EQ(pk::bench::matching_spec("NVIDIA H100 80GB HBM3", 8, hardware_spec_dir()),
            hardware_spec_dir() / "h100x8.toml");
  EXPECT_EQ(pk::bench::matching_spec("NVIDIA H200", 1, hardware_spec_dir()), hardware_spec_dir() / "h200x1.toml");
  EXPECT_EQ(pk::bench::matching_spec("NVIDIA H200", 4, hardware_spec_dir()), std::nullopt);
}

TEST(machine, one_gpu_lease_on_the_h200_host) {
  const auto m = describe_machine(device_kind::cuda, 1, h200s(1), {0}, topo("h200x1.txt"), hardware_spec_dir());
  EXPECT_EQ(m.summary(), "1 x NVIDIA H200 (one GPU, no links)");
  ASSERT_TRUE(m.spec.has_value());
  EXPECT_EQ(m.spec->gpu_count, 1);
  EXPECT_EQ(m.spec_file, hardware_spec_dir() / "h200x1.toml");
  EXPECT_EQ(m.missing_spec(), "");
}

TEST(machine, two_of_eight_h200s) {
  const auto m = describe_machine(device_kind::cuda, 2, h200s(8), {0, 1, 2, 3, 4, 5, 6, 7}, topo("h200x8.txt"),
                                  hardware_spec_dir());
  EXPECT_EQ(m.summary(), "2 x NVIDIA H200, linked by NV18");
  ASSERT_TRUE(m.spec.has_value());
  EXPECT_EQ(m.spec_file, hardware_spec_dir() / "h200x2.toml");
}

TEST(machine, no_spec_for_four_h200s_says_so) {
  const auto m = describe_machine(device_kind::cuda, 4, h200s(8), {0, 1, 2, 3}, topo("h200x8.txt"),
                                  hardware_spec_dir());
  EXPECT_EQ(m.summary(), "4 x NVIDIA H200, linked by NV18");
  EXPECT_FALSE(m.spec.has_value());
  EXPECT_EQ(m.missing_spec(), "No hardware spec in config/hardware describes 4 x NVIDIA H200, so no lower bound is given.");
}

TEST(machine, only_the_leasable_gpus_count) {
  auto host = h200s(2);
  host.push_back({2, 2, "0000:9a:00.0", "NVIDIA A100-SXM4-80GB"});
  const auto m = describe_machine(device_kind::cuda, 2, host, {0, 1}, topo("h200x8.txt"), hardware_spec_dir());
  EXPECT_EQ(m.gpu_model, "NVIDIA H200");
  EXPECT_TRUE(m.spec.has_value());
  const auto mixed = describe_machine(device_kind::cuda, 2, host, {1, 2}, {}, hardware_spec_dir());
  EXPECT_EQ(mixed.gpu_model, "NVIDIA H200 / NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(mixed.summary(), "2 x NVIDIA H200 / NVIDIA A100-SXM4-80GB, linked by unknown");
  EXPECT_FALSE(mixed.spec.has_value());
}

TEST(machine, cpu_mode_has_no_gpu_and_no_spec) {
  const auto m = describe_machine(device_kind::cpu, 2, h200s(8), {0, 1}, topo("h200x8.txt"), hardware_spec_dir());
  EXPECT_EQ(m.summary(), "no GPU: the ranks run on CPU (gloo)");
  EXPECT_EQ(m.gpu_count, 0);
  EXPECT_FALSE(m.spec.has_value());
  EXPECT_NE(m.missing_spec().find("no GPU here: the ranks run on CPU"), std::string::npos) << m.missing_spec();
}

}  // namespace
