// The hand-computed fixture runs in tests/report/fixture (values worked out in aggregate_test.cc).
#pragma once

#include <string>

#include "bench/metrics/aggregate.h"
#include "bench/metrics/results_file.h"

namespace pk::metrics::testing {

inline run_summary fixture_run(const std::string& name) {
  auto read = read_results(std::string(PKAGENT_TEST_DATA) + "/../report/fixture/" + name + "/results.jsonl");
  auto runs = summarize(read.results, bootstrap_options{});
  if (runs.size() != 1) throw std::runtime_error("fixture " + name + " should hold exactly one run");
  return runs.front();
}

}  // namespace pk::metrics::testing
