// A machine's ceilings, from config/hardware/<name>.toml: what each problem's roofline bound is
// computed against. The shipped spec (h200x2.toml) holds figures measured on our GPU host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace pk::bench {

struct hardware_spec {
  std::string name;
  std::string gpu;
  int gpu_count = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  double link_bw = 0;     ///< bytes/s out of one GPU towards its peers, one direction
  double hbm_bw = 0;      ///< bytes/s of device memory (read + write counted once)
  double bf16_flops = 0;  ///< dense bf16/fp16 FLOP/s
  double fp32_flops = 0;  ///< fp32 FLOP/s
};

/// Reads a hardware spec; throws config::config_error naming the file and key.
hardware_spec load_hardware_spec(const std::filesystem::path& file);

/// config/hardware/h200x2.toml of the pkagent data tree.
std::filesystem::path default_hardware_spec();

}  // namespace pk::bench
