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

TEST(result, version_1_is_still_read) {
  json j = to_json(sample_result());
  j["version"] = 1;
  j.erase("forbidden_reason");
  j.erase("device");
  j.erase("roofline_ms");
  const episode_result r = result_from_json(j);
  EXPECT_FALSE(r.device);
  EXPECT_FALSE(r.roofline_ms);
  EXPECT_TRUE(r.dollars_known);
  j["dollars"] = nullptr;
  EXPECT_EQ(error_of(j), "dollars: must be a number, not null") << "null dollars are new in version 2";
}

TEST(result, version_2_is_still_read_without_a_forbidden_reason) {
  json j = to_json(sample_result());
  j["version"] = 2;
  j.erase("forbidden_reason");
  j["verdict"] = "forbidden";
  j["correct"] = false;
  j["speedup"] = j["noise"] = j["timing"] = nullptr;
  const episode_result r = result_from_json(j);
  EXPECT_EQ(r.verdict, "forbidden");
  EXPECT_EQ(r.forbidden_reason, "");
  j["forbidden_reason"] = "tampering";
  EXPECT_EQ(error_of(j), "forbidden_reason: unknown field (a newer format? see docs/results.md)")
      << "the reason is new in version 3";
}

TEST(result, a_forbidden_verdict_keeps_its_reason) {
  const json j = to_json(pk::metrics::testing::forbidden_result(1, 0, "multicast"));
  EXPECT_EQ(j["forbidden_reason"], "multicast");
  EXPECT_EQ(result_from_json(j).forbidden_reason, "multicast");
  EXPECT_TRUE(to_json(sample_result())["forbidden_reason"].is_null()) << "no reason for any other verdict";
}

TEST(result, unknown_prices_are_null_not_zero) {
  auto r = sample_result();
  r.dollars = 0;
  r.dollars_known = false;
  const json j = to_json(r);
  EXPECT_TRUE(j["dollars"].is_null());
  EXPECT_FALSE(result_from_json(j).dollars_known);
}

TEST(result, roofline_fraction_is_bound_over_solution_time) {
  auto r = sample_result();  // bound 0.1 ms, solution 0.4 ms
  ASSERT_TRUE(roofline_fraction(r));
  EXPECT_DOUBLE_EQ(*roofline_fraction(r), 0.25);
  r.roofline_ms.reset();
  EXPECT_FALSE(roofline_fraction(r)) << "no bound (a CPU run)";
  r = sample_result();
  r.correct = false;
  EXPECT_FALSE(roofline_fraction(r)) << "only correct solutions reach a fraction of the bound";
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
  EXPECT_EQ(with([](json& j) { j["version"] = 4; }),
            "version: is 4, this pkagent reads versions 1 to 3 (see docs/results.md)");
  EXPECT_EQ(with([](json& j) { j.erase("forbidden_reason"); }), "forbidden_reason: missing");
  EXPECT_EQ(with([](json& j) { j["forbidden_reason"] = "tampering"; }),
            "forbidden_reason: is set, but the verdict is \"correct\", not forbidden");
  EXPECT_EQ(with([](json& j) {
              j["verdict"] = "forbidden";
              j["correct"] = false;
              j["forbidden_reason"] = "Judge Tampering";
            }),
            "forbidden_reason: \"Judge Tampering\" is not a snake_case name ([a-z0-9_]+)");
  EXPECT_EQ(with([](json& j) { j["device"] = "gpu"; }), "device: \"gpu\" is not cuda or cpu");
  EXPECT_EQ(with([](json& j) { j.erase("device"); }), "device: missing");
  EXPECT_EQ(with([](json& j) { j["roofline_ms"] = 0; }), "roofline_ms: must be > 0, got 0");
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
