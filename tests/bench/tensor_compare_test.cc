// The judge's comparison and the result-file reader, on files written in the workers' layout.
#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "bench/eval/tensor_compare.h"
#include "bench/eval/tensor_file.h"
#include "st_writer.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::make_tensor;
using testing::write_result_file;

class compare_test : public ::testing::Test {
 protected:
  fs::path dir = fs::path(::testing::TempDir()) / "pk_compare_test";
  void SetUp() override { fs::create_directories(dir); }

  tensor_file file(const std::string& name, const json& output, const std::vector<testing::raw_tensor>& tensors,
                   const json& inputs = json{{"tuple", json::array()}}) {
    write_result_file(dir / name, {{"output", output}, {"inputs", inputs}}, tensors);
    return tensor_file::read(dir / name);
  }
  comparison cmp(const tensor_file& got, const tensor_file& want, tolerance tol = {1e-2, 1e-2}) {
    return compare_outputs(got.tree("output"), got, want.tree("output"), want, tol);
  }
};

const json one_tensor = {{"tensor", "t0"}};

TEST_F(compare_test, equal_within_tolerance_passes_and_reports_errors) {
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {2, 2}, {1, 2, 3, 4})});
  auto got = file("g", one_tensor, {make_tensor<float>("t0", "F32", {2, 2}, {1, 2, 3.02f, 4})});
  const comparison c = cmp(got, want);
  EXPECT_TRUE(c.ok) << c.first_failure();
  EXPECT_NEAR(c.leaves.at(0).max_abs_error, 0.02, 1e-6);
  EXPECT_NEAR(c.leaves.at(0).max_rel_error, 0.02 / 3, 1e-6);
}

TEST_F(compare_test, beyond_tolerance_names_count_index_and_values) {
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {2, 3}, {1, 2, 3, 4, 5, 6})});
  auto got = file("g", one_tensor, {make_tensor<float>("t0", "F32", {2, 3}, {1, 2, 3, 4, 7, 9})});
  const comparison c = cmp(got, want);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.leaves.at(0).mismatches, 2u);
  EXPECT_EQ(c.leaves.at(0).first_index, "[1, 1]");
  EXPECT_NE(c.first_failure().find("2 of 6 elements differ"), std::string::npos) << c.first_failure();
  EXPECT_NE(c.first_failure().find("got 7, the reference 5"), std::string::npos) << c.first_failure();
}

TEST_F(compare_test, bf16_values_are_decoded) {
  // bf16 bits of 3.0 (0x4040) and 3.5 (0x4060).
  auto want = file("w", one_tensor, {make_tensor<std::uint16_t>("t0", "BF16", {1}, {0x4040})});
  auto got = file("g", one_tensor, {make_tensor<std::uint16_t>("t0", "BF16", {1}, {0x4060})});
  const comparison c = cmp(got, want);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.first_failure().find("got 3.5, the reference 3"), std::string::npos) << c.first_failure();
}

TEST_F(compare_test, nan_fails_only_where_the_reference_is_finite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {3}, {nan, 1, 2})});
  auto same = file("s", one_tensor, {make_tensor<float>("t0", "F32", {3}, {nan, 1, 2})});
  EXPECT_TRUE(cmp(same, want).ok);
  auto got = file("g", one_tensor, {make_tensor<float>("t0", "F32", {3}, {nan, nan, 2})});
  const comparison c = cmp(got, want);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.leaves.at(0).nonfinite, 1u);
  EXPECT_NE(c.first_failure().find("NaN or Inf"), std::string::npos);
  auto lost = file("l", one_tensor, {make_tensor<float>("t0", "F32", {3}, {0, 1, 2})});
  EXPECT_FALSE(cmp(lost, want).ok) << "a number where the reference has NaN must fail";
}

TEST_F(compare_test, shape_then_dtype_are_checked_and_named) {
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {2, 2}, {1, 2, 3, 4})});
  auto shape = file("s", one_tensor, {make_tensor<float>("t0", "F32", {4}, {1, 2, 3, 4})});
  EXPECT_NE(cmp(shape, want).first_failure().find("shape (4) but the reference has shape (2, 2)"), std::string::npos);
  auto dtype = file("d", one_tensor, {make_tensor<double>("t0", "F64", {2, 2}, {1, 2, 3, 4})});
  EXPECT_NE(cmp(dtype, want).first_failure().find("dtype float64 but the reference has dtype float32"),
            std::string::npos);
}

TEST_F(compare_test, integers_must_be_exact) {
  auto want = file("w", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {1000, 7})});
  auto got = file("g", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {1001, 7})});
  EXPECT_FALSE(cmp(got, want).ok) << "1001 vs 1000 is within rtol=1e-2 but indices must be exact";
}

TEST_F(compare_test, complex_compares_both_parts) {
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "C64", {1}, {1.0f, 2.0f})});
  auto got = file("g", one_tensor, {make_tensor<float>("t0", "C64", {1}, {1.0f, -2.0f})});
  EXPECT_FALSE(cmp(got, want).ok) << "PKB compares only real parts; we compare both";
}

TEST_F(compare_test, nesting_tuples_lists_dicts_and_values) {
  const json want_tree = {{"tuple",
                           {{{"tensor", "t0"}},
                            {{"dict", {{{{"value", "loss"}}, {{"value", 1.5}}}, {{{"value", "n"}}, {{"value", 3}}}}}},
                            {{"value", nullptr}}}}};
  const json list_tree = {{"list", want_tree["tuple"]}};
  auto want = file("w", want_tree, {make_tensor<float>("t0", "F32", {1}, {1})});
  auto as_list = file("l", list_tree, {make_tensor<float>("t0", "F32", {1}, {1})});
  EXPECT_TRUE(cmp(as_list, want).ok) << "tuple and list are interchangeable, as in PKB";

  json wrong_value = want_tree;
  wrong_value["tuple"][1]["dict"][1][1]["value"] = 4;
  auto v = file("v", wrong_value, {make_tensor<float>("t0", "F32", {1}, {1})});
  EXPECT_NE(cmp(v, want).first_failure().find("output[1][\"n\"]"), std::string::npos) << cmp(v, want).first_failure();

  json missing_key = want_tree;
  missing_key["tuple"][1]["dict"].erase(0);
  auto k = file("k", missing_key, {make_tensor<float>("t0", "F32", {1}, {1})});
  EXPECT_NE(cmp(k, want).first_failure().find("lacks the reference's key \"loss\""), std::string::npos);

  auto single = file("s", one_tensor, {make_tensor<float>("t0", "F32", {1}, {1})});
  EXPECT_NE(cmp(single, want).first_failure().find("a tensor but the reference returns a tuple of 3"),
            std::string::npos);
}

TEST_F(compare_test, unchanged_inputs_must_keep_their_bits_unless_the_reference_mutates_them) {
  const json inputs = {{"tuple", {{{"tensor", "t1"}}, {{"tensor", "t2"}}}}};
  auto want = file("w", one_tensor,
                   {make_tensor<float>("t0", "F32", {1}, {0}), make_tensor<float>("t1", "F32", {2}, {1, 2}),
                    make_tensor<float>("t2", "F32", {1}, {5})},
                   inputs);
  auto got = file("g", one_tensor,
                  {make_tensor<float>("t0", "F32", {1}, {0}), make_tensor<float>("t1", "F32", {2}, {1, 9}),
                   make_tensor<float>("t2", "F32", {1}, {6})},
                  inputs);
  const comparison c = compare_unchanged_inputs(got.tree("inputs"), got, want.tree("inputs"), want, {false, true});
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.leaves.size(), 1u) << "the second input is one the reference mutates";
  EXPECT_NE(c.first_failure().find("input[0]: the call modified this input"), std::string::npos) << c.first_failure();
  EXPECT_NE(c.first_failure().find("got 9, the value before the call 2"), std::string::npos) << c.first_failure();
  EXPECT_TRUE(compare_unchanged_inputs(got.tree("inputs"), got, got.tree("inputs"), got, {false, false}).ok);
}

// ---- per-leaf rules ----

comparison by_rule(const tensor_file& got, const tensor_file& want, compare_rule rule) {
  return compare_outputs(got.tree("output"), got, want.tree("output"), want, compare_spec::uniform(rule));
}

compare_rule fraction(compare_rule r, double max_mismatch_fraction) {
  r.max_mismatch_fraction = max_mismatch_fraction;
  return r;
}
const compare_rule exact = compare_rule::of(compare_mode::exact);

compare_rule norm_within(double max_rel_norm) {
  compare_rule r = compare_rule::of(compare_mode::norm);
  r.max_rel_norm = max_rel_norm;
  return r;
}

compare_rule ulp_within(std::int64_t max_ulp) {
  compare_rule r = compare_rule::of(compare_mode::ulp);
  r.max_ulp = max_ulp;
  return r;
}

compare_rule tie_rule(compare_mode mode) {
  compare_rule r = compare_rule::of(mode);
  r.keys = "tie_keys";
  return r;
}

TEST_F(compare_test, exact_mode_allows_a_declared_fraction_of_flips) {
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {4}, {1, 2, 3, 4})});
  auto got = file("g", one_tensor, {make_tensor<float>("t0", "F32", {4}, {1, 2, 3, 4.0001f})});
  EXPECT_TRUE(cmp(got, want).ok) << "within allclose";
  const comparison c = by_rule(got, want, exact);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.first_failure().find("1 of 4 elements differ from the reference"), std::string::npos)
      << c.first_failure();
  EXPECT_TRUE(by_rule(got, want, fraction(exact, 0.25)).ok);
  const comparison tight = by_rule(got, want, fraction(exact, 0.2));
  EXPECT_NE(tight.first_failure().find("(at most 0 may"), std::string::npos) << tight.first_failure();
  // A fraction never excuses NaN where the reference is finite.
  auto nan = file("n", one_tensor, {make_tensor<float>("t0", "F32", {4}, {1, 2, 3, NAN})});
  EXPECT_FALSE(by_rule(nan, want, fraction(exact, 0.5)).ok);
  EXPECT_FALSE(by_rule(nan, want, fraction(compare_rule::allclose(1, 1), 0.5)).ok);
}

TEST_F(compare_test, norm_mode_judges_tiny_outputs_by_their_relative_distance) {
  // Values of ~1e-4: zeros pass allclose at atol 1e-2, but not the norm rule.
  auto want = file("w", one_tensor, {make_tensor<float>("t0", "F32", {3}, {1e-4f, -2e-4f, 3e-4f})});
  auto zeros = file("z", one_tensor, {make_tensor<float>("t0", "F32", {3}, {0, 0, 0})});
  EXPECT_TRUE(cmp(zeros, want).ok);
  const compare_rule norm = norm_within(1e-2);
  const comparison c = by_rule(zeros, want, norm);
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.first_failure().find("||got - want|| / ||want|| = 1 "), std::string::npos) << c.first_failure();
  auto close = file("c", one_tensor, {make_tensor<float>("t0", "F32", {3}, {1.001e-4f, -2e-4f, 3e-4f})});
  const comparison ok = by_rule(close, want, norm);
  EXPECT_TRUE(ok.ok) << ok.first_failure();
  EXPECT_LT(ok.leaves.at(0).max_rel_error, 1e-2);
}

TEST_F(compare_test, ulp_mode_counts_representable_steps_of_fp8_and_bf16) {
  // e4m3 codes: 0x40 = 2, 0x41 = 2.25, 0x42 = 2.5; 0xC0 = -2; 0x00 = +0, 0x80 = -0.
  auto want = file("w", one_tensor, {make_tensor<std::uint8_t>("t0", "F8_E4M3", {4}, {0x40, 0x41, 0xC0, 0x00})});
  auto one_step = file("o", one_tensor, {make_tensor<std::uint8_t>("t0", "F8_E4M3", {4}, {0x41, 0x41, 0xC1, 0x80})});
  auto two_steps = file("t", one_tensor, {make_tensor<std::uint8_t>("t0", "F8_E4M3", {4}, {0x42, 0x41, 0xC0, 0x00})});
  const compare_rule ulp = ulp_within(1);
  EXPECT_FALSE(cmp(one_step, want).ok) << "one e4m3 step (0.25 at 2) is beyond atol";
  const comparison c = by_rule(one_step, want, ulp);
  EXPECT_TRUE(c.ok) << c.first_failure();
  EXPECT_EQ(c.leaves.at(0).max_ulp, 1);
  const comparison far = by_rule(two_steps, want, ulp);
  ASSERT_FALSE(far.ok);
  EXPECT_NE(far.first_failure().find("more than 1 ulp from the reference"), std::string::npos) << far.first_failure();
  EXPECT_NE(far.first_failure().find("got 2.5, the reference 2"), std::string::npos) << far.first_failure();
  // Across zero: -tiny and +tiny are two steps apart (through 0).
  auto pos = file("p", one_tensor, {make_tensor<std::uint16_t>("t0", "BF16", {1}, {0x0001})});
  auto neg = file("n", one_tensor, {make_tensor<std::uint16_t>("t0", "BF16", {1}, {0x8001})});
  EXPECT_FALSE(by_rule(neg, pos, ulp).ok);
  EXPECT_TRUE(by_rule(neg, pos, ulp_within(2)).ok);
}

// The reference's judge data: keys for the tie-aware rules, recorded under "judge".
tensor_file with_keys(const fs::path& path, const json& output, std::vector<testing::raw_tensor> tensors) {
  write_result_file(path,
                    {{"output", output},
                     {"inputs", {{"tuple", json::array()}}},
                     {"judge", {{"dict", {{{{"value", "tie_keys"}}, {{"tensor", "k"}}}}}}}},
                    tensors);
  return tensor_file::read(path);
}

TEST_F(compare_test, rank_mode_accepts_any_rank_within_the_tie_group) {
  // Row 0: the item 0.5, one key above it and three equal to it (itself included): ranks 2..4.
  // Row 1: the item 0.9, tied with one other key: ranks 1..2.
  const auto keys = make_tensor<float>("k", "F32", {2, 5}, {0.5f, 0.9f, 0.5f, 0.1f, 0.5f, 0.9f, 0.1f, 0.2f, 0.3f, 0.9f});
  const compare_rule rank = tie_rule(compare_mode::rank);
  auto want = with_keys(dir / "w", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {2, 1}), keys});
  for (std::int64_t r0 : {2, 3, 4})
    for (std::int64_t r1 : {1, 2}) {
      auto got = file("g", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {r0, r1})});
      const comparison c = compare_outputs(got.tree("output"), got, want.tree("output"), want,
                                           compare_spec::uniform(rank));
      EXPECT_TRUE(c.ok) << r0 << " " << r1 << ": " << c.first_failure();
    }
  auto bad = file("b", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {1, 1})});
  const comparison c = compare_outputs(bad.tree("output"), bad, want.tree("output"), want,
                                       compare_spec::uniform(rank));
  ASSERT_FALSE(c.ok);
  EXPECT_NE(c.first_failure().find("1 of 2 ranks lie outside their tie groups, first at [0]: got 1"),
            std::string::npos)
      << c.first_failure();
  EXPECT_NE(c.first_failure().find("any of 2..4"), std::string::npos) << c.first_failure();
  // Without the keys in the reference's record the rule cannot be applied, and says why.
  auto no_keys = file("n", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {2, 1})});
  const comparison missing = compare_outputs(bad.tree("output"), bad, no_keys.tree("output"), no_keys,
                                             compare_spec::uniform(rank));
  EXPECT_NE(missing.first_failure().find("holds no keys 'tie_keys'"), std::string::npos) << missing.first_failure();
  // Keys that do not explain the reference's own value point at the problem, not the candidate.
  auto wrong = with_keys(dir / "x", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {2}, {5, 1}), keys});
  const comparison unexplained = compare_outputs(bad.tree("output"), bad, wrong.tree("output"), wrong,
                                                 compare_spec::uniform(rank));
  EXPECT_NE(unexplained.first_failure().find("the problem's keys function is wrong"), std::string::npos)
      << unexplained.first_failure();
}

TEST_F(compare_test, index_mode_accepts_ties_in_any_order_but_not_other_keys_or_repeats) {
  // One row of keys {0.3, 0.7, 0.7, 0.1}; the reference's top 2 are indices (1, 2).
  const auto keys = make_tensor<float>("k", "F32", {1, 4}, {0.3f, 0.7f, 0.7f, 0.1f});
  const compare_rule index = tie_rule(compare_mode::index);
  auto want = with_keys(dir / "w", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {1, 2}, {1, 2}), keys});
  auto judge = [&](std::vector<std::int64_t> v) {
    auto got = file("g", one_tensor, {make_tensor<std::int64_t>("t0", "I64", {1, 2}, v)});
    return compare_outputs(got.tree("output"), got, want.tree("output"), want, compare_spec::uniform(index));
  };
  EXPECT_TRUE(judge({2, 1}).ok);
  EXPECT_NE(judge({1, 0}).first_failure().find("selects key 0.3 where the reference selects key 0.7"),
            std::string::npos)
      << judge({1, 0}).first_failure();
  EXPECT_NE(judge({1, 1}).first_failure().find("repeated in its row"), std::string::npos);
  EXPECT_NE(judge({1, 9}).first_failure().find("out of range"), std::string::npos);
}

TEST_F(compare_test, rules_apply_to_the_longest_declared_path) {
  const json tree = {{"tuple", {{{"tensor", "t0"}}, {{"tensor", "t1"}}}}};
  auto want = file("w", tree,
                   {make_tensor<float>("t0", "F32", {1}, {1}), make_tensor<float>("t1", "F32", {1}, {1})});
  auto got = file("g", tree,
                  {make_tensor<float>("t0", "F32", {1}, {1.001f}), make_tensor<float>("t1", "F32", {1}, {1.001f})});
  compare_spec spec;
  spec.rules = {{"output", exact}, {"output[1]", compare_rule::allclose(0.01, 0)}};
  const comparison c = compare_outputs(got.tree("output"), got, want.tree("output"), want, spec);
  ASSERT_EQ(c.leaves.size(), 2u);
  EXPECT_FALSE(c.leaves[0].ok) << "output[0] falls under output's exact rule";
  EXPECT_TRUE(c.leaves[1].ok) << "output[1] has its own rule";
  EXPECT_EQ(spec.rule_for("output[10]").mode, compare_mode::exact) << "output[1] is no ancestor of output[10]";
}

TEST_F(compare_test, in_place_results_are_compared_and_digests_stand_for_large_inputs) {
  // Inputs: argument 0 is in place (the reference scaled it to 0.5), argument 1 large (recorded as a digest).
  const json digest = {{"digest", {{"dtype", "F32"}, {"shape", {1000}}, {"hash", "abc"}}}};
  write_result_file(dir / "w", {{"output", one_tensor}, {"inputs", {{"tuple", {{{"tensor", "t1"}}, digest}}}},
                                {"in_place", {{"tuple", {{{"tensor", "t2"}}}}}}},
                    {make_tensor<float>("t0", "F32", {1}, {3}), make_tensor<float>("t1", "F32", {1}, {1}),
                     make_tensor<float>("t2", "F32", {1}, {0.5f})});
  const tensor_file want = tensor_file::read(dir / "w");
  compare_spec spec;
  spec.rules = {{"input[0]", exact}};
  const std::vector<bool> mutated = {true, false};
  auto got_file = [&](float scaled, const std::string& hash) {
    json d = digest;
    d["digest"]["hash"] = hash;
    write_result_file(dir / "g", {{"output", one_tensor}, {"inputs", {{"tuple", {{{"tensor", "t1"}}, d}}}}},
                      {make_tensor<float>("t0", "F32", {1}, {3}), make_tensor<float>("t1", "F32", {1}, {scaled})});
    return tensor_file::read(dir / "g");
  };
  const tensor_file right = got_file(0.5f, "abc");
  const comparison ok = judge_files(right, want, spec, {0}, mutated);
  EXPECT_TRUE(ok.ok) << ok.first_failure();
  const tensor_file unscaled = got_file(1, "abc");
  const comparison c = judge_files(unscaled, want, spec, {0}, mutated);
  EXPECT_NE(c.first_failure().find("input[0]: 1 of 1 elements differ from the reference, first at [0]: got 1, the "
                                   "reference 0.5"),
            std::string::npos)
      << c.first_failure();
  const tensor_file touched = got_file(0.5f, "abd");
  EXPECT_NE(judge_files(touched, want, spec, {0}, mutated).first_failure().find("input[1]: the call modified this "
                                                                                 "input, which the reference leaves "
                                                                                 "unchanged: its digest changed"),
            std::string::npos);
}

TEST_F(compare_test, sparse_records_compare_their_size_indices_and_values) {
  const auto sparse = [](const char* i, const char* v) {
    return json{{"sparse_coo", {{"size", {4}}, {"indices", {{"tensor", i}}}, {"values", {{"tensor", v}}}}}};
  };
  auto want = file("w", sparse("i", "v"),
                   {make_tensor<std::int64_t>("i", "I64", {1, 2}, {0, 3}), make_tensor<float>("v", "F32", {2}, {1, 2})});
  auto moved = file("g", sparse("i", "v"),
                    {make_tensor<std::int64_t>("i", "I64", {1, 2}, {0, 2}), make_tensor<float>("v", "F32", {2}, {1, 2})});
  const comparison c = cmp(moved, want);
  ASSERT_FALSE(c.ok);
  EXPECT_EQ(c.first_failure().rfind("output.indices:", 0), 0u) << c.first_failure();
}

TEST_F(compare_test, malformed_files_are_refused_with_the_reason) {
  std::ofstream(dir / "short") << "abc";
  EXPECT_THROW(tensor_file::read(dir / "short"), tensor_file_error);
  EXPECT_THROW(tensor_file::read(dir / "absent"), tensor_file_error);
  // A tensor whose byte range runs past the end of the file.
  auto t = make_tensor<float>("t0", "F32", {4}, {1, 2, 3, 4});
  t.shape = {8};
  write_result_file(dir / "lying", {{"output", one_tensor}}, {t});
  try {
    tensor_file::read(dir / "lying");
    FAIL() << "a shape larger than its bytes must be refused";
  } catch (const tensor_file_error& e) {
    EXPECT_NE(std::string(e.what()).find("do not hold its shape"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pk::bench
