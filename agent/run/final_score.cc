#include "agent/run/final_score.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/read_file.h"

namespace pk::run {

bench::eval_report score_solution(const bench::problem& problem, const std::filesystem::path& solution,
                                  bench::eval_options o, scheduler::gpu_scheduler& gpus, scheduler::holder who,
                                  std::stop_token stop) {
  bench::eval_report missing;
  missing.problem = problem.name();
  missing.solution = solution.string();
  missing.world = o.world;
  missing.device = o.device;
  missing.dtype = problem.dtype;
  missing.trials_requested = o.trials;
  if (!std::filesystem::exists(solution)) {
    missing.result = bench::verdict::compile_error;
    missing.message = "the episode left no solution.py";
    return missing;
  }
  scheduler::acquire_result got = gpus.acquire(who, o.world, stop);
  if (!got) throw std::runtime_error(fmt::format("final scoring of {} got no GPUs: {}", problem.name(), got.message()));
  if (o.device == bench::device_kind::cuda) o.gpus = got.value().gpus();
  try {
    return bench::evaluate(problem, solution, o);
  } catch (const std::invalid_argument& e) {
    // The candidate's file is unusable (e.g. not readable): the judge's compile_error.
    missing.result = bench::verdict::compile_error;
    missing.message = e.what();
    return missing;
  }
}

metrics::episode_result episode_record(const bench::problem& p, int world, const episode_facts& f) {
  metrics::episode_result e;
  e.run_id = f.run_id;
  e.mode = f.mode;
  e.model = f.model;
  e.problem_id = p.id;
  e.stem = p.stem;
  e.problem_category = metrics::parse_category(p.category).value_or(metrics::category::upstream);
  e.world_size = world;
  e.sample = f.sample;
  e.tokens_in = f.used.input_tokens;
  e.tokens_out = f.used.output_tokens;
  e.dollars = f.used.dollars;
  e.dollars_known = f.prices_known;
  e.gpu_seconds = f.gpu_seconds;
  e.wall_seconds = f.used.wall_seconds;
  e.end_reason = f.end_reason;
  e.transcript = f.transcript;
  return e;
}

metrics::episode_result make_result(const bench::problem& p, const bench::eval_report& r, const episode_facts& f) {
  metrics::episode_result e = episode_record(p, r.world, f);
  e.verdict = bench::to_string(r.result);
  if (r.result == bench::verdict::forbidden) e.forbidden_reason = bench::to_string(r.reason);
  e.correct = r.ok();
  e.wall_seconds += r.wall_seconds;  // docs/results.md: start to result
  e.device = r.device;
  // The bound is of the GPU the hardware spec describes: on a CPU it would compare unlike things.
  if (r.device == bench::device_kind::cuda) e.roofline_ms = r.roofline_ms;
  // The judge reads a speedup with its interval, or neither.
  if (r.ok() && r.speedup && r.interval && r.interval->low > 0 && r.reference && r.candidate) {
    e.speedup = *r.speedup;
    // How far the speedup stands above its interval's low end: "faster" (speedup > 1 + noise)
    // then means the whole interval lies above 1.
    e.noise = std::max(0.0, *r.speedup / r.interval->low - 1);
    e.timings = metrics::timing{r.reference->median_ms, r.candidate->median_ms, static_cast<int>(r.trials.size())};
  }
  return e;
}

std::optional<std::string> nothing_submitted(const std::filesystem::path& solution, const std::filesystem::path& stub) {
  const auto text = try_read_file(solution);
  if (!text) return "the episode left no solution.py";
  if (!stub.empty() && try_read_file(stub) == text) return "solution.py is still the task's stub";
  return std::nullopt;
}

metrics::episode_result unjudged_result(const bench::problem& p, int world, bench::device_kind device,
                                        const episode_facts& f) {
  metrics::episode_result e = episode_record(p, world, f);
  e.verdict = std::string(no_submission_verdict);
  e.correct = false;
  e.device = device;
  return e;
}

bool faster_beyond_noise(const metrics::episode_result& r) {
  return r.correct && r.speedup && *r.speedup > 1.0 + r.noise.value_or(0);
}

}  // namespace pk::run
