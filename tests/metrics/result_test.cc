#include "bench/metrics/result.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sample_result.h"

namespace {

using namespace pk::metrics;
using pk::metrics::testing::sample_result;
using json = nlohmann::json;

std::string error_of(const json& j) {
  try {
    result_from_json(j);
  } catch (const result_error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(result, round_trips_through_json) {
  auto r = sample_result();
  auto back = result_from_json(json::parse(to_json(r).dump()));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.problem_category, category::primitive);
  ASSERT_TRUE(back.timings);
  EXPECT_EQ(back.timings->trials, 5);

  r.correct = false;
  r.verdict = "compile_error";
  r.speedup.reset();
  r.noise.reset();
  r.timings.reset();
  back = result_from_json(to_json(r));
  EXPECT_FALSE(back.speedup || back.noise || back.timings);
}

TEST(result, names_and_enums_round_trip) {
  for (auto cat : all_categories) EXPECT_EQ(parse_category(to_string(cat)), cat);
  EXPECT_EQ(parse_mode("zeroshot"), run_mode::zeroshot);
  EXPECT_FALSE(parse_mode("zero-shot"));
  EXPECT_FALSE(parse_category("gemm"));
}

TEST(result, refusals_name_the_field_and_the_fix) {
  auto good = to_json(sample_result());
  auto with = [&](auto edit) {
    json j = good;
    edit(j);
    return error_of(j);
  };
  EXPECT_EQ(error_of(good), "(accepted)");
  EXPECT_EQ(with([](json& j) { j.erase("model"); }), "model: missing");
  EXPECT_EQ(with([](json& j) { j["version"] = 2; }), "version: is 2, this pkagent reads version 1 (see docs/results.md)");
  EXPECT_EQ(with([](json& j) { j["mode"] = "zero-shot"; }), "mode: \"zero-shot\" is not agent or zeroshot");
  EXPECT_EQ(with([](json& j) { j["problem"]["category"] = "gemm"; }),
            "problem.category: \"gemm\" is not one of primitive, gemm_comm, fused, moe, sequence_parallel, optimizer, "
            "domain, upstream");
  EXPECT_EQ(with([](json& j) { j["problem"]["id"] = 0; }), "problem.id: must be >= 1, got 0");
  EXPECT_EQ(with([](json& j) { j["problem"] = 3; }), "problem: must be a JSON object, not number");
  EXPECT_EQ(with([](json& j) { j["speedup"] = -1.0; }), "speedup: must be > 0, got -1");
  EXPECT_EQ(with([](json& j) { j["speedup"] = "fast"; }), "speedup: must be a number, not string");
  EXPECT_EQ(with([](json& j) { j["correct"] = 1; }), "correct: must be true or false, not number");
  EXPECT_EQ(with([](json& j) { j["verdict"] = "Wrong Output"; }),
            "verdict: \"Wrong Output\" is not a snake_case name ([a-z0-9_]+)");
  EXPECT_EQ(with([](json& j) { j["tokens"]["in"] = -3; }), "tokens.in: must be >= 0, got -3");
  EXPECT_EQ(with([](json& j) { j["tokens"]["cached"] = 3; }),
            "tokens.cached: unknown field (a newer format? see docs/results.md)");
  EXPECT_EQ(with([](json& j) { j["colour"] = "red"; }), "colour: unknown field (a newer format? see docs/results.md)");
  EXPECT_EQ(with([](json& j) { j["timing"].erase("trials"); }), "timing.trials: missing");
  EXPECT_EQ(with([](json& j) { j["noise"] = nullptr; }),
            "noise: missing for a timed correct result (fast_1 needs the noise bound)");
  EXPECT_EQ(error_of(json::array()), "must be a JSON object, not array");
}

}  // namespace
