// Every shipped machine description (config/hardware/*.toml) loads through the evaluator's strict
// reader, and the paper's 8 x H100 carries the datasheet figures it claims.
#include <filesystem>

#include <gtest/gtest.h>

#include "bench/suite/hardware_spec.h"
#include "config/paths.h"

namespace {

namespace fs = std::filesystem;

TEST(hardware_specs, every_shipped_spec_loads) {
  int loaded = 0;
  for (const auto& entry : fs::directory_iterator(pk::config::data_path("config/hardware"))) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    auto h = pk::bench::load_hardware_spec(entry.path());
    EXPECT_GE(h.gpu_count, 1);
    EXPECT_GT(h.sm_count, 0);
    EXPECT_GT(h.l2_bytes, 0u);
    // Link below HBM below the tensor cores: a swapped unit would break this order.
    EXPECT_LT(h.link_bw, h.hbm_bw);
    EXPECT_LT(h.hbm_bw, h.bf16_flops);
    ++loaded;
  }
  EXPECT_GE(loaded, 2);
}

TEST(hardware_specs, h100x8_is_the_papers_node) {
  auto h = pk::bench::load_hardware_spec(pk::config::data_path("config/hardware/h100x8.toml"));
  EXPECT_EQ(h.gpu_count, 8);
  EXPECT_EQ(h.sm_count, 132);
  EXPECT_EQ(h.l2_bytes, 50ull << 20);
  EXPECT_DOUBLE_EQ(h.link_bw, 450e9);  // 900 GB/s NVLink4 counted both ways
  EXPECT_DOUBLE_EQ(h.hbm_bw, 3.35e12);
  EXPECT_DOUBLE_EQ(h.bf16_flops, 989e12);
  EXPECT_NE(h.name.find("datasheet"), std::string::npos);  // never mistaken for a measurement
}

}  // namespace
