#include "bench/suite/hardware_spec.h"

#include <stdexcept>

#include "config/paths.h"
#include "config/toml_reader.h"

namespace pk::bench {

hardware_spec load_hardware_spec(const std::filesystem::path& file) {
  const toml::table doc = config::parse_file(file);
  config::table_reader r(doc, file.string());
  auto need = [&](auto value, std::string_view key) {
    if (!value) throw r.error(key, "missing (see config/hardware/h200x2.toml)");
    return *value;
  };
  auto positive = [&](std::string_view key) {
    double v = need(r.non_negative_number(key), key);
    if (v <= 0) throw r.error(key, "must be > 0");
    return v;
  };
  hardware_spec h;
  h.name = need(r.string("name"), "name");
  h.gpu = need(r.string("gpu"), "gpu");
  h.gpu_count = static_cast<int>(need(r.non_negative("gpu_count"), "gpu_count"));
  h.sm_count = static_cast<int>(need(r.non_negative("sm_count"), "sm_count"));
  const std::string l2 = need(r.string("l2_bytes"), "l2_bytes");
  try {
    h.l2_bytes = config::parse_size(l2);
  } catch (const std::invalid_argument& e) {
    throw r.error("l2_bytes", e.what());
  }
  h.link_bw = positive("link_bw");
  h.hbm_bw = positive("hbm_bw");
  h.bf16_flops = positive("bf16_flops");
  h.fp32_flops = positive("fp32_flops");
  r.finish();
  return h;
}

std::filesystem::path default_hardware_spec() { return config::data_path("config/hardware/h200x2.toml"); }

}  // namespace pk::bench
