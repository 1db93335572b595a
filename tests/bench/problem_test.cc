// problem.toml loading (docs/problem_format.md): the suite's own files, what the worker receives, the
// formulas, and the refusals of bad files, each naming the key and the fix.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "bench/eval/worker_plan.h"
#include "bench/suite/formula.h"
#include "bench/suite/hardware_spec.h"
#include "bench/suite/problem.h"
#include "bench/suite/roofline.h"
#include "bench/suite/suite.h"
#include "config/toml_reader.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;

const char* base_toml = R"(id = 90
stem = "sample"
category = "fused"
title = "a sample"
world_sizes = [2, 4]
dtype = "bfloat16"
atol = 1e-2
rtol = 1e-2

[shape]
M = 64

[small_shape]
M = 8

[second_distribution]
normal = "heavy_tailed"

[[inputs]]
name = "x"
type = "tensor"
values = "normal"

[[outputs]]
path = "output"
dtype = "bfloat16"
)";

class problem_test : public ::testing::Test {
 protected:
  fs::path root = fs::path(::testing::TempDir()) / "pk_problem_test";
  void SetUp() override { fs::remove_all(root); }

  fs::path write(const std::string& toml) {
    const fs::path dir = root / "90_sample";
    fs::create_directories(dir);
    std::ofstream(dir / "problem.toml") << toml;
    std::ofstream(dir / "reference.py") << "def solution(x):\n    return x\n";
    std::ofstream(dir / "inputs.py") << "def make_inputs(ctx, M):\n    return (ctx.randn((M,), 'x'),)\n";
    return dir;
  }
  // Loading must fail with a message holding every one of `needles`.
  void refused(const std::string& toml, std::initializer_list<const char*> needles) {
    try {
      load_problem(write(toml));
      ADD_FAILURE() << "accepted:\n" << toml;
    } catch (const config::config_error& e) {
      for (const char* n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  }
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST_F(problem_test, the_suite_loads_and_every_problem_plans_at_every_world_size) {
  const auto suite = load_suite(default_suite_dir());
  ASSERT_GE(suite.size(), 17u);
  const hardware_spec hw = load_hardware_spec(default_hardware_spec());
  for (const problem& p : suite) {
    EXPECT_FALSE(p.args.empty()) << p.name();
    EXPECT_FALSE(p.outputs.empty()) << p.name();
    EXPECT_EQ(p.small_shape.size(), p.shape.size()) << p.name();
    for (int w : p.world_sizes) {
      const auto plan = worker_plan(p, w);
      EXPECT_EQ(plan["args"].size(), p.args.size()) << p.name();
      EXPECT_GE(roofline(p, w, hw).seconds(), 0) << p.name();
    }
  }
  const problem& ring = find_problem(suite, "55");
  EXPECT_TRUE(ring.degenerate_at(2));
  EXPECT_FALSE(ring.degenerate_at(4));
  EXPECT_EQ(ring.degenerate_why_at(4), "");
  // One rank communicates nothing: W = 1 is degenerate wherever a problem supports it, without a
  // [degenerate] entry, and keeps a file's own reason for its other worlds.
  EXPECT_TRUE(ring.degenerate_at(1));
  EXPECT_NE(ring.degenerate_why_at(1).find("nothing is communicated"), std::string::npos);
  EXPECT_EQ(ring.degenerate_why_at(2), ring.degenerate_why);
  const problem& not_at_one = find_problem(suite, "22");
  EXPECT_FALSE(not_at_one.supports_world(1));
  EXPECT_FALSE(not_at_one.degenerate_at(1));
  const auto plan = worker_plan(ring, 8);
  EXPECT_EQ(plan["mesh"], nlohmann::json({{"axes", {"cp", "tp"}}, {"sizes", {4, 2}}}));
  EXPECT_EQ(plan["args"][6], nlohmann::json({{"name", "tp_group"}, {"type", "group"}, {"dtype", nullptr},
                                             {"group", "tp"}, {"in_place", false}}));
  const problem& clip = find_problem(suite, "21");
  EXPECT_EQ(clip.in_place_positions(), std::vector<int>{0});
  EXPECT_EQ(clip.comparison().rule_for("input[0][2]").mode, compare_mode::norm);
  EXPECT_EQ(clip.comparison().rule_for("output").mode, compare_mode::allclose);
  EXPECT_EQ(worker_plan(find_problem(suite, "69"), 2)["judge_data"], nlohmann::json({"tie_keys"}));
}

TEST_F(problem_test, a_valid_sample_loads) {
  const problem p = load_problem(write(base_toml));
  EXPECT_EQ(p.name(), "90_sample");
  EXPECT_EQ(p.args.at(0).dtype, "bfloat16") << "tensor arguments default to the problem's dtype";
  EXPECT_EQ(worker_plan(p, 2)["mesh"], nullptr);
  // A list of tensor shapes (a tuple of int tuples) is a plain argument: no dtype, no values.
  const problem shapes = load_problem(write(std::string(base_toml) + "\n[[inputs]]\nname = \"param_shapes\"\n"
                                                                     "type = \"shapes\"\n"));
  EXPECT_EQ(worker_plan(shapes, 2)["args"][1],
            nlohmann::json({{"name", "param_shapes"}, {"type", "shapes"}, {"dtype", nullptr}, {"group", nullptr},
                            {"in_place", false}}));
  refused(std::string(base_toml) + "\n[[inputs]]\nname = \"s\"\ntype = \"shapes\"\nvalues = \"normal\"\n",
          {"inputs[1].values", "only tensor"});
}

TEST_F(problem_test, bad_files_are_refused_naming_the_key) {
  refused(replaced(base_toml, "category = \"fused\"", "category = \"gemm\""), {"category", "'gemm' is not one of"});
  refused(replaced(base_toml, "category = \"fused\"", "category = \"upstream\""), {"category"});
  refused(replaced(base_toml, "[small_shape]\nM = 8\n", ""), {"small_shape", "every [shape] key a small value"});
  refused(replaced(base_toml, "values = \"normal\"", "values = \"gaussian\""), {"inputs[0].values", "gaussian"});
  refused(replaced(base_toml, "values = \"normal\"", "values = \"uniform\""), {"inputs[0].low", "needs low and high"});
  refused(replaced(base_toml, "type = \"tensor\"\nvalues = \"normal\"", "type = \"int\"\nin_place = true"),
          {"inputs[0].in_place", "does not apply here"});
  refused(replaced(base_toml, "path = \"output\"", "path = \"output\"\nmax_ulp = 1"),
          {"outputs[0].max_ulp", "does not apply to mode 'allclose'"});
  refused(replaced(base_toml, "path = \"output\"", "path = \"output\"\nmode = \"ulp\""),
          {"outputs[0].max_ulp", "missing"});
  refused(replaced(base_toml, "path = \"output\"", "path = \"output\"\nmode = \"rank\""), {"outputs[0].keys"});
  refused(replaced(base_toml, "path = \"output\"", "path = \"out\""), {"outputs[0].path", "must start with"});
  refused(replaced(base_toml, "[[outputs]]", "[[outputs]]\npath = \"output\"\n\n[[outputs]]"),
          {"declared twice"});
  refused(replaced(base_toml, "name = \"x\"", "name = \"x\"\ngroup = \"tp\""), {"inputs[0].group"});
  refused(replaced(base_toml, "atol = 1e-2", "atol = 1e-2\ncolour = 3"), {"colour", "unknown key"});
  // Meshes: whole sizes whose product is W, and a size-1 axis only at a declared degenerate world size.
  const std::string mesh = "\n[mesh]\naxes = [\"a\", \"b\"]\nsizes = [\"W/2\", \"2\"]\n";
  refused(std::string(base_toml) + "\n[mesh]\naxes = [\"a\", \"b\"]\nsizes = [\"W\", \"2\"]\n",
          {"mesh.sizes", "product"});
  refused(std::string(base_toml) + mesh, {"mesh.sizes", "at W=2 an axis has size 1", "[degenerate]"});
  const problem p = load_problem(write(std::string(base_toml) + mesh + "\n[degenerate]\nworlds = [2]\nwhy = \"a = 1\"\n"));
  EXPECT_EQ(p.mesh_sizes(4), (std::vector<int>{2, 2}));
  refused(std::string(base_toml) + "\n[mesh]\naxes = [\"world\"]\nsizes = [\"W\"]\n", {"mesh.axes"});
  refused(std::string(base_toml) + "\n[mesh]\naxes = [\"a\"]\nsizes = [\"W/3\"]\n", {"not a whole number"});
  refused(std::string(base_toml) + "\n[degenerate]\nworlds = [8]\nwhy = \"x\"\n", {"degenerate.worlds"});
}

TEST_F(problem_test, a_second_distribution_is_declared_and_reaches_the_worker) {
  const problem p = load_problem(write(base_toml));
  ASSERT_TRUE(p.second.has_value());
  EXPECT_EQ(p.second->normal, draw_change::heavy_tailed);
  EXPECT_EQ(worker_plan(p, 2)["second_distribution"],
            nlohmann::json({{"normal", "heavy_tailed"}, {"uniform", "same"}, {"integers", "same"}}));
  const std::string table = "[second_distribution]\nnormal = \"heavy_tailed\"\n";
  refused(replaced(base_toml, table, ""), {"second_distribution", "missing", "docs/problem_format.md"});
  refused(replaced(base_toml, table, "[second_distribution]\nnormal = \"skewed\"\n"),
          {"second_distribution.normal", "'skewed': one of same, heavy_tailed, shifted_scaled"});
  refused(replaced(base_toml, table, "[second_distribution]\nintegers = \"heavy_tailed\"\n"),
          {"second_distribution.integers", "one of same, skewed"});
  refused(replaced(base_toml, table, "[second_distribution]\nnormal = \"same\"\n"),
          {"second_distribution.why", "say why"});
  refused(replaced(base_toml, table, "[second_distribution]\nnormal = \"heavy_tailed\"\nscale = 2\n"),
          {"scale", "unknown key"});
  const problem unchanged =
      load_problem(write(replaced(base_toml, table, "[second_distribution]\nwhy = \"the values are an index\"\n")));
  EXPECT_FALSE(unchanged.second->changes_anything());
  EXPECT_EQ(worker_plan(unchanged, 2)["second_distribution"], nullptr);
}

TEST_F(problem_test, every_suite_problem_draws_one_trial_from_a_second_distribution) {
  for (const problem& q : load_suite(default_suite_dir())) {
    ASSERT_TRUE(q.second.has_value()) << q.name();
    EXPECT_TRUE(q.second->changes_anything() || !q.second->why.empty()) << q.name();
  }
}

TEST_F(problem_test, formulas_allow_min_max_log2_and_declared_names_only) {
  EXPECT_EQ(evaluate_formula("min(2, W) * max(1, 3) + log2(1024)", {{"W", 8}}), 16);
  EXPECT_EQ(evaluate_formula("2^10 + 1e3", {}), 2024);
  try {
    evaluate_formula("sin(W)", {{"W", 1}});
    ADD_FAILURE() << "sin is not allowed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown name 'sin'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(evaluate_formula("Q * 2", {{"W", 1}}), std::invalid_argument);
  EXPECT_THROW(evaluate_formula("2 *", {}), std::invalid_argument);
}

}  // namespace
}  // namespace pk::bench
