#include "bench/eval/roofline.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>
#include <muParser.h>

#include "config/toml_reader.h"

namespace pk::bench {

double roofline_bound::seconds() const { return std::max({link_s, hbm_s, flops_s}); }

std::string roofline_bound::limiter() const {
  if (link_s >= hbm_s && link_s >= flops_s) return "link";
  return hbm_s >= flops_s ? "hbm" : "flops";
}

roofline_bound roofline(const problem& p, int world, const hardware_spec& hw) {
  // muParser keeps pointers to the variables: a deque never moves its elements.
  std::deque<double> values;
  mu::Parser parser;
  auto define = [&](const std::string& name, double v) {
    values.push_back(v);
    parser.DefineVar(name, &values.back());
  };
  for (const auto& [name, v] : p.shape) define(name, static_cast<double>(v));
  define("W", world);
  define("E", dtype_size(p.dtype));

  auto eval = [&](const std::string& key, const std::string& formula) {
    try {
      parser.SetExpr(formula);
      double v = parser.Eval();
      if (!(v >= 0)) throw config::config_error(fmt::format("evaluates to {} (must be >= 0)", v));
      return v;
    } catch (const mu::Parser::exception_type& e) {
      throw config::config_error(fmt::format("{}: roofline.{}: cannot evaluate '{}': {}",
                                             (p.dir / "problem.toml").string(), key, formula, e.GetMsg()));
    } catch (const config::config_error& e) {
      throw config::config_error(fmt::format("{}: roofline.{}: '{}' {}", (p.dir / "problem.toml").string(),
                                             key, formula, e.what()));
    }
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
