// kr_torch inside the evaluator: a candidate that imports kernels_runtime's binding finds it in
// the sandbox (sources read-only, on sys.path), and the offer binds nothing writable.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "bench/eval/sets/kr_torch_stage.h"
#include "eval_runner.h"

namespace pk::bench {
namespace {

namespace fs = std::filesystem;

TEST(kr_torch_offer, candidate_importing_kr_torch_runs_in_the_sandbox) {
  const fs::path cache = fs::path(::testing::TempDir()) / "pk_kr_torch_offer_cache";
  const auto r = testing::run_pkagent({"eval", "-q", "--json", "--problem", "1", "--device", "cpu", "--no-perf",
                                       "--trials", "1", "--solution",
                                       testing::test_data("candidates/allreduce_imports_kr_torch.py").string()},
                                      cache);
  ASSERT_TRUE(r.report.is_object()) << r.err << r.out;
  EXPECT_EQ(r.report["verdict"], "correct") << r.report.dump(2);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(kr_torch_offer, sources_are_bound_read_only_and_put_on_the_path) {
  const fs::path ws = fs::path(::testing::TempDir()) / "pk_kr_torch_offer_ws";
  fs::remove_all(ws);
  fs::create_directories(ws);
  const kr_torch_offer o = offer_kr_torch(ws, /*sandboxed=*/true, ws / "cache", /*prebuild=*/false, nullptr);
  ASSERT_EQ(o.binds.size(), 1u);
  EXPECT_EQ(o.binds[0].inside, "/workspace/kernels_runtime");
  EXPECT_FALSE(o.binds[0].writable);
  EXPECT_TRUE(fs::exists(o.binds[0].host / "python" / "kr_torch" / "__init__.py"));
  EXPECT_TRUE(fs::is_directory(ws / "kernels_runtime")) << "the mount point is made in the workspace";
  EXPECT_EQ(o.python_path, nlohmann::json::array({"kernels_runtime/python"}));
  EXPECT_TRUE(o.env.empty()) << "no prebuilt extension was asked for";
  EXPECT_FALSE(fs::exists(ws / "cache" / "kr-torch")) << "nothing is built without prebuild";

  const kr_torch_offer host = offer_kr_torch(ws, /*sandboxed=*/false, ws / "cache", false, nullptr);
  EXPECT_TRUE(host.binds.empty());
  ASSERT_EQ(host.python_path.size(), 1u);
  EXPECT_TRUE(fs::exists(fs::path(host.python_path[0].get<std::string>()) / "kr_torch" / "__init__.py"));
}

}  // namespace
}  // namespace pk::bench
