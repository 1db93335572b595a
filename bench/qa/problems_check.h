// `pkagent problems --check ID,...|all`: the discrimination check (discrimination.h) of the chosen
// problems, as a table or JSON on stdout.
#pragma once

#include <string>
#include <vector>

#include "bench/eval/evaluate.h"
#include "bench/suite/problem.h"

namespace pk::bench {

/// What `--check` was asked, and the evaluator's options it judges with.
struct problems_check {
  std::string problems;  ///< "all" (every problem that supports o.world) or ids, comma-separated
  bool small = false;    ///< run at each problem's [small_shape]
  eval_options o = [] {
    eval_options e;
    e.trials = 2;  // a wrong candidate fails its first trial; two show a right one is stable
    return e;
  }();
};

/// Checks the chosen problems of `suite`, printing JSON when `json`, else a table and a line per
/// finding. Returns the exit status: 0 when every checked problem tells wrong answers from right ones.
int run_problems_check(const problems_check& a, bool json, const std::vector<problem>& suite);

}  // namespace pk::bench
