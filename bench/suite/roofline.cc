#include "bench/suite/roofline.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/suite/formula.h"
#include "config/toml_reader.h"

namespace pk::bench {

double roofline_bound::seconds() const { return std::max({link_s, hbm_s, flops_s}); }

std::string roofline_bound::limiter() const {
  if (link_s >= hbm_s && link_s >= flops_s) return "link";
  return hbm_s >= flops_s ? "hbm" : "flops";
}

roofline_bound roofline(const problem& p, int world, const hardware_spec& hw) {
  formula_vars vars;
  for (const auto& [name, v] : p.shape) vars.emplace_back(name, static_cast<double>(v));
  vars.emplace_back("W", world);
  vars.emplace_back("E", dtype_size(p.dtype));

  auto eval = [&](const std::string& key, const std::string& formula) {
    double v = 0;
    try {
      v = evaluate_formula(formula, vars);
    } catch (const std::invalid_argument& e) {
      throw config::config_error(fmt::format("{}: roofline.{}: cannot evaluate '{}': {}",
                                             (p.dir / "problem.toml").string(), key, formula, e.what()));
    }
    if (!(v >= 0))
      throw config::config_error(fmt::format("{}: roofline.{}: '{}' evaluates to {} at W={} (must be >= 0)",
                                             (p.dir / "problem.toml").string(), key, formula, v, world));
    return v;
  };
  roofline_bound b;
  b.link_bytes = eval("link_bytes", p.roofline.link_bytes);
  b.hbm_bytes = eval("hbm_bytes", p.roofline.hbm_bytes);
  b.flops = eval("flops", p.roofline.flops);
  const bool low_precision = dtype_size(p.dtype) <= 2;
  b.link_s = world > 1 ? b.link_bytes / hw.link_bw : 0;
  b.hbm_s = b.hbm_bytes / hw.hbm_bw;
  b.flops_s = b.flops / (low_precision ? hw.bf16_flops : hw.fp32_flops);
  return b;
}

}  // namespace pk::bench
