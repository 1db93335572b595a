// The embedded problem suite: one directory per problem (bench/problems/<id>_<stem>/) holding
// reference.py, inputs.py and problem.toml. The format, field by field: docs/problem_format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/suite/compare_rule.h"

namespace pk::bench {

/// A named process-group layout, built once per evaluation after init_process_group: rank =
/// row-major index over `axes` (the first axis outermost). Each axis is a group of the ranks that
/// differ only in that axis's coordinate.
struct mesh_decl {
  std::vector<std::string> axes;
  std::vector<std::string> sizes;  ///< formulas of W, one per axis; their product is W
};

/// One positional argument of solution(), as make_inputs must build it.
struct input_decl {
  std::string name;       ///< solution()'s parameter name
  std::string type;       ///< tensor | tensors | int | float | bool | ints | shapes | none | group
  std::string dtype;      ///< tensor(s): torch dtype name (the problem's dtype unless given)
  std::string values;     ///< tensor(s): normal | uniform | integers | fixed
  double mean = 0, std = 1;          ///< normal
  double low = 0, high = 1;          ///< uniform [low, high), integers [low, high)
  std::optional<double> value;       ///< int, float, bool: the fixed value, when it is one
  std::string group;                 ///< group: "world" or a mesh axis
  /// tensor(s): the value after the call is part of the answer, compared with `rule` like an output.
  bool in_place = false;
  compare_rule rule;
};

/// How a draw of the problem's second distribution differs from the usual one (docs/problem_format.md,
/// [second_distribution]).
enum class draw_change {
  same,            ///< drawn as usual
  heavy_tailed,    ///< normal draws: mean + std * z * (1 - u)^(-1/3), a Pareto scale on each value
  shifted_scaled,  ///< normal draws: mean + std and four times std
  skewed,          ///< uniform and integer draws: the same range, low + (high - low) * u^3
};
std::string_view to_string(draw_change c);

/// [second_distribution]: what the inputs of one trial of every evaluation of two or more trials
/// (second_distribution_trial) draw instead of the usual values, so that an answer that assumes the
/// usual distribution (a closed form, a clamp, a fixed scale) fails there.
struct second_distribution {
  draw_change normal = draw_change::same;
  draw_change uniform = draw_change::same;
  draw_change integers = draw_change::same;
  std::string why;  ///< why every draw stays the same (required then; nothing is left to change)

  bool changes_anything() const {
    return normal != draw_change::same || uniform != draw_change::same || integers != draw_change::same;
  }
};

/// The trial whose inputs come from the problem's second distribution: the second of every
/// evaluation (so `pkb check`'s two visible trials show it too, and a trial's cached reference
/// outputs never depend on how many trials ran).
inline constexpr int second_distribution_trial = 1;

/// One leaf (or subtree) of solution()'s return value: "output", "output[0]", "output[\"loss\"]".
struct output_decl {
  std::string path;
  std::string dtype;  ///< torch dtype name of every tensor under `path`; empty for plain values
  compare_rule rule;
};

/// A problem as problem.toml describes it, plus where its files are.
struct problem {
  int id = 0;
  std::string stem;
  std::string category;   ///< one of bench/metrics' categories; "upstream" for a PKB checkout's problem
  std::string title;
  std::vector<int> world_sizes;
  std::string dtype;  ///< torch dtype name without "torch.", e.g. "bfloat16"
  /// The default allclose tolerances: every output and in-place input that names no rule of its own.
  double atol = 1e-2;
  double rtol = 1e-2;
  /// The [shape] table in file order: keyword arguments of make_inputs.
  std::vector<std::pair<std::string, std::int64_t>> shape;
  /// [small_shape]: the same keys with small values, for CPU runs (tests, the discrimination check).
  std::vector<std::pair<std::string, std::int64_t>> small_shape;
  std::optional<mesh_decl> mesh;
  std::vector<input_decl> args;      ///< [[inputs]]: solution()'s arguments; empty in upstream mode
  std::vector<output_decl> outputs;  ///< empty in upstream mode: everything uses atol and rtol
  /// Required in our format; upstream problems draw with PKB's generator, and have none.
  std::optional<second_distribution> second;
  /// World sizes at which the problem's communication pattern degenerates (e.g. a ring of one), as the
  /// file's [degenerate] table names them; W = 1 is degenerate for every problem without being listed.
  std::vector<int> degenerate_worlds;
  std::string degenerate_why;
  struct roofline_formulas {
    std::string link_bytes = "0";
    std::string hbm_bytes = "0";
    std::string flops = "0";
  } roofline;
  std::filesystem::path dir;        ///< the problem's directory
  std::filesystem::path reference;  ///< dir / reference.py
  std::filesystem::path inputs;     ///< dir / inputs.py (upstream: the checkout's input generator)
  /// Upstream mode (bench/suite/upstream.h): the root of the ParallelKernelBench checkout this
  /// problem comes from; empty for a problem in our own format.
  std::filesystem::path upstream_root;

  std::string name() const;  ///< "<id>_<stem>"
  bool upstream() const { return !upstream_root.empty(); }
  /// Upstream problems take any world size, as PKB does (its generator refuses what it cannot build).
  bool supports_world(int world) const;
  /// A supported world where nothing or less than the problem's pattern is communicated: W = 1 (one
  /// rank) wherever supported, and the worlds of [degenerate].
  bool degenerate_at(int world) const;
  /// Why the pattern degenerates at `world` (empty where it does not).
  std::string degenerate_why_at(int world) const;
  /// Positions (0-based) of the arguments declared in_place.
  std::vector<int> in_place_positions() const;
  /// The comparison rules: each declared output path, "input[i]" for each in-place argument i, and
  /// allclose with atol and rtol for everything else.
  compare_spec comparison() const;
  /// Mesh axis sizes at `world`; empty without a mesh. Throws config::config_error naming the file.
  std::vector<int> mesh_sizes(int world) const;
};

/// Reads <dir>/problem.toml and checks the files; throws config::config_error naming the file.
problem load_problem(const std::filesystem::path& dir);

/// Bytes per element of a torch dtype name; 0 for an unknown name.
int dtype_size(std::string_view dtype);

/// A stable 64-bit digest of the problem's content (reference.py, inputs.py, problem.toml and the
/// shape in use; upstream: the reference, the generator and PKB's defaults): the reference-output
/// cache key, so editing any of them, or running another shape, invalidates cached outputs.
std::uint64_t content_hash(const problem& p);

}  // namespace pk::bench
