// The embedded problem suite: one directory per problem (bench/problems/<id>_<stem>/) holding
// reference.py, inputs.py and problem.toml (format: .dev/PROBLEM_FORMAT.md, bench/problems/README.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pk::bench {

/// A problem as problem.toml describes it, plus where its files are.
struct problem {
  int id = 0;
  std::string stem;
  std::string category;
  std::string title;
  std::vector<int> world_sizes;
  std::string dtype;  ///< torch dtype name without "torch.", e.g. "bfloat16"
  double atol = 1e-2;
  double rtol = 1e-2;
  /// The [shape] table in file order: keyword arguments of make_inputs.
  std::vector<std::pair<std::string, std::int64_t>> shape;
  struct roofline_formulas {
    std::string link_bytes = "0";
    std::string hbm_bytes = "0";
    std::string flops = "0";
  } roofline;
  std::filesystem::path dir;        ///< the problem's directory
  std::filesystem::path reference;  ///< dir / reference.py
  std::filesystem::path inputs;     ///< dir / inputs.py (upstream: the checkout's input generator)
  /// Upstream mode (bench/eval/upstream.h): the root of the ParallelKernelBench checkout this
  /// problem comes from; empty for a problem in our own format.
  std::filesystem::path upstream_root;

  std::string name() const;  ///< "<id>_<stem>"
  bool upstream() const { return !upstream_root.empty(); }
  /// Upstream problems take any world size, as PKB does (its generator refuses what it cannot build).
  bool supports_world(int world) const;
};

/// Reads <dir>/problem.toml and checks the files; throws config::config_error naming the file.
problem load_problem(const std::filesystem::path& dir);

/// Every problem under `root`, sorted by id: the directories holding a problem.toml, or, when
/// `root` is a ParallelKernelBench checkout, its references (upstream mode). Throws
/// std::invalid_argument when `root` is neither.
std::vector<problem> load_suite(const std::filesystem::path& root);

/// The suite directory: bench/problems of the pkagent data tree.
std::filesystem::path default_suite_dir();

/// Finds a problem by id ("13"), stem ("gemm_allreduce") or directory name ("13_gemm_allreduce").
/// Throws std::invalid_argument listing the known ids when there is none.
const problem& find_problem(const std::vector<problem>& suite, std::string_view key);

/// Bytes per element of a torch dtype name; 0 for an unknown name.
int dtype_size(std::string_view dtype);

/// A stable 64-bit digest of the problem's content (reference.py, inputs.py, problem.toml; upstream:
/// the reference, the generator and PKB's defaults): the
/// reference-output cache key, so editing any of them invalidates cached outputs.
std::uint64_t content_hash(const problem& p);

}  // namespace pk::bench
