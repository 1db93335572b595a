#include "bench/qa/problems_check.h"

#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/qa/discrimination.h"
#include "bench/suite/suite.h"

namespace pk::bench {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int run_problems_check(const problems_check& a, bool json, const std::vector<problem>& suite) {
  std::vector<const problem*> chosen;
  if (a.problems == "all") {
    for (const problem& p : suite)
      if (p.supports_world(a.o.world)) chosen.push_back(&p);
  } else {
    for (const std::string& key : split_list(a.problems)) chosen.push_back(&find_problem(suite, key));
  }
  const eval_options& o = a.o;
  std::vector<discrimination_result> results;
  bool ok = true;
  for (const problem* p : chosen) {
    problem q = *p;
    if (a.small) {
      if (q.upstream())
        throw std::invalid_argument("--small: the problems of a ParallelKernelBench checkout have no small shape");
      q.shape = q.small_shape;
    }
    if (!json) fmt::print(stderr, "pkagent problems: checking {} at W={} ({})\n", q.name(), a.o.world,
                                 to_string(o.device));
    results.push_back(check_discrimination(q, o));
    ok = ok && results.back().ok();
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results) out.push_back(to_json(r));
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{}", render_table(results));
    for (const auto& r : results) {
      if (r.reference_verdict != "correct")
        fmt::print("{}: the reference is not correct as its own candidate: {}\n", r.problem, r.reference_note);
      for (const auto& c : r.candidates)
        if (c.right_here)
          fmt::print("{}: skipping communication ('{}') is a right answer at W={}, a degenerate world size ({}); "
                     "another --world checks it\n",
                     r.problem, c.mode, r.world, r.degenerate_why);
        else if (c.applicable && c.verdict == "correct")
          fmt::print("{}: the wrong candidate '{}' passes: this problem's check is vacuous at W={}\n", r.problem,
                     c.mode, r.world);
    }
  }
  return ok ? 0 : 1;
}

}  // namespace pk::bench
