// The judge's comparison and the result-file reader, on files written in the workers' layout.
#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "bench/eval/compare.h"
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
