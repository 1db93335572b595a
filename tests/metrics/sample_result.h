// A valid result for tests to start from and vary.
#pragma once

#include <string>
#include <utility>

#include "bench/metrics/result.h"

namespace pk::metrics::testing {

inline episode_result sample_result(int problem = 1, int sample = 0) {
  episode_result r;
  r.run_id = "run-1";
  r.mode = run_mode::agent;
  r.model = "demo";
  r.problem_id = problem;
  r.stem = "allreduce";
  r.problem_category = category::primitive;
  r.world_size = 2;
  r.sample = sample;
  r.verdict = "correct";
  r.correct = true;
  r.speedup = 1.25;
  r.noise = 0.05;
  r.timings = timing{0.5, 0.4, 5};
  r.tokens_in = 1200;
  r.tokens_out = 340;
  r.dollars = 0.012;
  r.gpu_seconds = 3.5;
  r.wall_seconds = 61.0;
  r.device = pk::bench::device_kind::cuda;
  r.roofline_ms = 0.1;
  r.end_reason = "submitted";
  r.transcript = "episodes/1_allreduce/0/transcript.json";
  return r;
}

/// A sample whose verdict is `forbidden` for `reason` (empty: a result that names none).
inline episode_result forbidden_result(int problem, int sample, std::string reason) {
  episode_result r = sample_result(problem, sample);
  r.verdict = std::string(forbidden_verdict);
  r.forbidden_reason = std::move(reason);
  r.correct = false;
  r.speedup = r.noise = std::nullopt;
  r.timings.reset();
  return r;
}

}  // namespace pk::metrics::testing
