// A problem's lower-bound time on a machine: the least bytes over the interconnect, the least
// device-memory bytes and the FLOPs per rank (problem.toml's [roofline] formulas of the shape, the
// world size W and the element size E; + - * / min max log2, bench/suite/formula.h), each over the
// machine's ceiling; the largest wins.
#pragma once

#include <string>

#include "bench/suite/hardware_spec.h"
#include "bench/suite/problem.h"

namespace pk::bench {

struct roofline_bound {
  double link_bytes = 0, hbm_bytes = 0, flops = 0;  ///< per rank
  double link_s = 0, hbm_s = 0, flops_s = 0;
  double seconds() const;
  std::string limiter() const;  ///< "link", "hbm" or "flops"
};

/// Evaluates the formulas (muParser); throws config::config_error naming the problem.toml key.
roofline_bound roofline(const problem& p, int world, const hardware_spec& hw);

}  // namespace pk::bench
