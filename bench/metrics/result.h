// One finished episode, as the episode runner records it and every report reads it.
// The on-disk form (a JSON object, one line of results.jsonl) is specified in docs/results.md;
// this struct is its typed mirror, and result_from_json refuses anything that does not match.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "bench/device_kind.h"

namespace pk::metrics {

/// Version of the result format; bump on any incompatible change and say so in docs/results.md.
/// Readers also accept versions 1 (no device, no roofline bound, dollars always known) and 2 (no
/// forbidden reason).
inline constexpr int results_format_version = 3;

enum class run_mode { agent, zeroshot };

/// Problem categories, in report order (problem.toml's `category`). `upstream`: a problem of a
/// ParallelKernelBench checkout (upstream mode), which declares none of its own.
enum class category { primitive, gemm_comm, fused, moe, sequence_parallel, optimizer, domain, upstream };
inline constexpr std::array all_categories = {category::primitive, category::gemm_comm, category::fused,
                                              category::moe,       category::sequence_parallel,
                                              category::optimizer, category::domain,  category::upstream};

std::string_view to_string(run_mode mode);
std::string_view to_string(category cat);
std::optional<run_mode> parse_mode(std::string_view text);
std::optional<category> parse_category(std::string_view text);

/// Reference and solution time (max over ranks, mean per call) on the hidden inputs.
struct timing {
  double reference_ms = 0;
  double solution_ms = 0;
  int trials = 0;
};

struct episode_result {
  std::string run_id;
  run_mode mode = run_mode::agent;
  std::string model;
  int problem_id = 0;
  std::string stem;
  category problem_category = category::primitive;
  int world_size = 1;
  int sample = 0;  // 0-based index of this episode among the problem's samples
  std::string verdict;  // the judge's verdict name, e.g. "correct", "mismatch", "timeout"
  /// With the verdict "forbidden": what the judge caught ("multicast", "tampering", "background");
  /// empty for every other verdict, and where a result does not say (before version 3).
  std::string forbidden_reason;
  bool correct = false;
  std::optional<double> speedup;  // reference time / solution time on hidden inputs
  std::optional<double> noise;    // relative timing noise: speedups <= 1 + noise are not "faster"
  std::optional<timing> timings;
  std::int64_t tokens_in = 0;
  std::int64_t tokens_out = 0;
  double dollars = 0;
  bool dollars_known = true;  // false: the model's prices are unknown, `dollars` (0) means nothing
  double gpu_seconds = 0;     // leases, world size x seconds: GPUs on cuda, evaluation slots on cpu
  double wall_seconds = 0;    // the episode and its final scoring
  std::optional<bench::device_kind> device;  // where it was scored; unset in version-1 results
  std::optional<double> roofline_ms;  // the problem's bound per call on the run's hardware spec (cuda only)
  std::string end_reason;  // why the episode ended, e.g. "submitted", "step_limit"
  std::string transcript;  // path of the transcript, relative to the run directory
};

/// A result object that does not match the format; the message names the field.
class result_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The verdict of an episode that could not be run or scored because of the infrastructure (pkagent
/// raised, its node was lost, its shard ended before it): not the model's failure, and retried when
/// the run is resumed. Reports count these apart (docs/results.md).
inline constexpr std::string_view infrastructure_verdict = "harness_error";
inline bool is_infrastructure_failure(const episode_result& r) { return r.verdict == infrastructure_verdict; }

/// The judge's verdict for a candidate that did what no solution may (a reward hack it caught);
/// `forbidden_reason` says what.
inline constexpr std::string_view forbidden_verdict = "forbidden";

/// How close a correct timed solution came to its roofline bound: bound / solution time (1 = at
/// the bound). nullopt when the result is not correct, not timed or has no bound.
std::optional<double> roofline_fraction(const episode_result& result);

nlohmann::json to_json(const episode_result& result);
/// Strict: every field checked for presence, type and range; unknown fields refused.
episode_result result_from_json(const nlohmann::json& object);

}  // namespace pk::metrics
