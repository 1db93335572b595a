#include "bench/suite/problem.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/digest.h"
#include "bench/metrics/result.h"
#include "bench/suite/formula.h"
#include "config/enum_names.h"
#include "config/toml_reader.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");

bool is_identifier(const std::string& s) { return std::regex_match(s, identifier); }

bool is_tensor_type(std::string_view t) { return t == "tensor" || t == "tensors"; }

constexpr std::string_view input_types[] = {"tensor", "tensors", "int",    "float", "bool",
                                            "ints",   "shapes",  "none",   "group"};
constexpr std::string_view value_kinds[] = {"normal", "uniform", "integers", "fixed"};

template <class Range>
bool one_of(const Range& range, std::string_view v) {
  return std::find(std::begin(range), std::end(range), v) != std::end(range);
}

// Throws when a key is present although it does not apply; `why` says what it applies to.
void refuse_key(config::table_reader& r, std::string_view key, std::string_view why) {
  for (const std::string& k : r.remaining_keys())
    if (k == key) throw r.error(key, fmt::format("does not apply here: {}", why));
}

std::vector<std::pair<std::string, std::int64_t>> read_shape(config::table_reader& r, std::string_view key) {
  std::vector<std::pair<std::string, std::int64_t>> shape;
  if (auto t = r.table(key)) {
    for (const std::string& k : t->remaining_keys()) {
      auto v = t->integer(k);
      if (*v < 1) throw t->error(k, fmt::format("must be a size >= 1, found {}", *v));
      shape.emplace_back(k, *v);
    }
    t->finish();
  }
  return shape;
}

input_decl read_input(config::table_reader& t, const problem& p) {
  input_decl in;
  in.name = t.string("name").value_or("");
  if (!is_identifier(in.name))
    throw t.error("name", fmt::format("'{}' is not a Python parameter name: give solution()'s parameter", in.name));
  in.type = t.string("type").value_or("");
  if (!one_of(input_types, in.type))
    throw t.error("type", fmt::format("'{}' is not one of tensor, tensors, int, float, bool, ints, shapes, none, "
                                      "group",
                                      in.type));
  const bool tensor = is_tensor_type(in.type);
  if (tensor) {
    in.dtype = t.string("dtype").value_or(p.dtype);
    if (dtype_size(in.dtype) == 0) throw t.error("dtype", fmt::format("unknown dtype '{}'", in.dtype));
    in.values = t.string("values").value_or("");
    if (!one_of(value_kinds, in.values))
      throw t.error("values", fmt::format("'{}' is not one of normal, uniform, integers, fixed (how make_inputs "
                                          "draws this argument; the tests check it)",
                                          in.values));
    if (in.values == "normal") {
      in.mean = t.number("mean").value_or(0.0);
      in.std = t.non_negative_number("std").value_or(1.0);
    } else {
      refuse_key(t, "mean", "only values = \"normal\" has a mean and std");
      refuse_key(t, "std", "only values = \"normal\" has a mean and std");
    }
    if (in.values == "uniform" || in.values == "integers") {
      auto lo = t.number("low"), hi = t.number("high");
      if (!lo || !hi) throw t.error(lo ? "high" : "low", fmt::format("missing: values = \"{}\" needs low and high", in.values));
      if (!(*lo < *hi)) throw t.error("high", fmt::format("must be above low ({} <= {})", *hi, *lo));
      in.low = *lo;
      in.high = *hi;
    } else {
      refuse_key(t, "low", "only values = \"uniform\" or \"integers\" have low and high");
      refuse_key(t, "high", "only values = \"uniform\" or \"integers\" have low and high");
    }
    in.in_place = t.boolean("in_place").value_or(false);
    if (in.in_place) {
      in.rule = read_compare_rule(t, compare_rule::allclose(p.atol, p.rtol));
    }
  } else {
    for (const char* k : {"dtype", "values", "mean", "std", "low", "high", "in_place"})
      refuse_key(t, k, "only tensor and tensors arguments have a dtype, values and in_place");
  }
  if (!in.in_place)
    for (const char* k : {"mode", "atol", "rtol", "max_rel_norm", "max_ulp", "max_mismatch_fraction", "keys",
                          "descending"})
      refuse_key(t, k, "a comparison rule belongs to an output or to an input with in_place = true");
  if (in.type == "int" || in.type == "float") {
    in.value = t.number("value");
    if (in.value && in.type == "int" && *in.value != std::floor(*in.value))
      throw t.error("value", "an int argument needs an integer value");
  } else if (in.type == "bool") {
    if (auto b = t.boolean("value")) in.value = *b ? 1.0 : 0.0;
  } else {
    refuse_key(t, "value", "only int, float and bool arguments have a fixed value");
  }
  if (in.type == "group") {
    in.group = t.string("group").value_or("");
    const bool axis = p.mesh && one_of(p.mesh->axes, in.group);
    if (in.group != "world" && !axis)
      throw t.error("group", fmt::format("'{}' is neither \"world\" nor an axis of [mesh]", in.group));
  } else {
    refuse_key(t, "group", "only group arguments name a group");
  }
  t.finish();
  return in;
}

output_decl read_output(config::table_reader& t, const problem& p) {
  output_decl out;
  out.path = t.string("path").value_or("");
  if (out.path.rfind("output", 0) != 0)
    throw t.error("path", fmt::format("'{}' must start with \"output\" (\"output\", \"output[0]\", "
                                      "'output[\"loss\"]')",
                                      out.path));
  out.dtype = t.string("dtype").value_or("");
  if (!out.dtype.empty() && dtype_size(out.dtype) == 0)
    throw t.error("dtype", fmt::format("unknown dtype '{}'", out.dtype));
  out.rule = read_compare_rule(t, compare_rule::allclose(p.atol, p.rtol));
  t.finish();
  return out;
}

// Mesh sizes at every supported world size must be whole, positive and multiply to W; an axis of one
// rank at a world size means the pattern degenerates there, which the file must say.
void check_mesh(const problem& p, const config::table_reader& r) {
  for (int w : p.world_sizes) {
    const std::vector<int> sizes = p.mesh_sizes(w);
    long long product = 1;
    for (int s : sizes) product *= s;
    if (product != w)
      throw r.error("mesh.sizes", fmt::format("at W={} the axes have sizes {}, whose product {} is not W",
                                              w, fmt::join(sizes, " x "), product));
    if (w > 1 && std::find(sizes.begin(), sizes.end(), 1) != sizes.end() && !p.degenerate_at(w))
      throw r.error("mesh.sizes", fmt::format("at W={} an axis has size 1 ({}): add {} to [degenerate] worlds "
                                              "and say why",
                                              w, fmt::join(sizes, " x "), w));
  }
}

}  // namespace

std::string problem::name() const { return fmt::format("{}_{}", id, stem); }

bool problem::supports_world(int world) const {
  if (upstream()) return world >= 1;
  return std::find(world_sizes.begin(), world_sizes.end(), world) != world_sizes.end();
}

// A world of one rank communicates nothing, whatever the problem: said once here rather than in every
// file that supports W = 1.
constexpr const char* one_rank_why = "one rank at W = 1 (a host with one GPU): nothing is communicated";

bool problem::degenerate_at(int world) const {
  if (world == 1) return supports_world(1);
  return std::find(degenerate_worlds.begin(), degenerate_worlds.end(), world) != degenerate_worlds.end();
}

std::string problem::degenerate_why_at(int world) const {
  if (!degenerate_at(world)) return "";
  return world == 1 ? one_rank_why : degenerate_why;
}

std::vector<int> problem::in_place_positions() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].in_place) out.push_back(static_cast<int>(i));
  return out;
}

compare_spec problem::comparison() const {
  compare_spec spec;
  spec.fallback = compare_rule::allclose(atol, rtol);
  for (const output_decl& o : outputs) spec.rules.emplace_back(o.path, o.rule);
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].in_place) spec.rules.emplace_back(fmt::format("input[{}]", i), args[i].rule);
  return spec;
}

std::vector<int> problem::mesh_sizes(int world) const {
  std::vector<int> sizes;
  if (!mesh) return sizes;
  const formula_vars vars = {{"W", static_cast<double>(world)}};
  for (std::size_t i = 0; i < mesh->sizes.size(); ++i) {
    double v = 0;
    try {
      v = evaluate_formula(mesh->sizes[i], vars);
    } catch (const std::invalid_argument& e) {
      throw config::config_error(fmt::format("{}: mesh.sizes[{}]: cannot evaluate '{}': {}",
                                             (dir / "problem.toml").string(), i, mesh->sizes[i], e.what()));
    }
    if (!(v >= 1) || v != std::floor(v) || v > world)
      throw config::config_error(fmt::format("{}: mesh.sizes[{}]: '{}' gives {} at W={}, not a whole number of ranks",
                                             (dir / "problem.toml").string(), i, mesh->sizes[i], v, world));
    sizes.push_back(static_cast<int>(v));
  }
  return sizes;
}

int dtype_size(std::string_view dtype) {
  static const std::pair<std::string_view, int> sizes[] = {
      {"bfloat16", 2}, {"float16", 2},  {"half", 2},          {"float32", 4},
      {"float", 4},    {"float64", 8},  {"double", 8},        {"int8", 1},
      {"uint8", 1},    {"int16", 2},    {"int32", 4},         {"int64", 8},
      {"bool", 1},     {"complex64", 8}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  for (const auto& [name, size] : sizes)
    if (name == dtype) return size;
  return 0;
}

namespace {

// id, stem, category, title, world_sizes, dtype and the default tolerances.
void read_identity(config::table_reader& r, problem& p) {
  auto required = [&](auto value, std::string_view key) {
    if (!value) throw r.error(key, "missing (see docs/problem_format.md)");
    return *value;
  };
  p.id = static_cast<int>(required(r.integer("id"), "id"));
  if (p.id < 1) throw r.error("id", "must be the ParallelKernelBench id, >= 1");
  p.stem = required(r.string("stem"), "stem");
  p.category = required(r.string("category"), "category");
  if (!metrics::parse_category(p.category) || p.category == "upstream")
    throw r.error("category", fmt::format("'{}' is not one of primitive, gemm_comm, fused, moe, sequence_parallel, "
                                          "optimizer, domain",
                                          p.category));
  p.title = required(r.string("title"), "title");
  if (p.title.empty()) throw r.error("title", "must not be empty: one line for listings");
  for (std::int64_t w : required(r.integers("world_sizes"), "world_sizes")) {
    if (w < 1) throw r.error("world_sizes", fmt::format("world size {} must be >= 1", w));
    if (p.supports_world(static_cast<int>(w))) throw r.error("world_sizes", fmt::format("{} is listed twice", w));
    p.world_sizes.push_back(static_cast<int>(w));
  }
  if (p.world_sizes.empty()) throw r.error("world_sizes", "must name at least one world size");
  p.dtype = required(r.string("dtype"), "dtype");
  if (dtype_size(p.dtype) == 0)
    throw r.error("dtype", fmt::format("unknown dtype '{}' (use a torch name such as bfloat16)", p.dtype));
  p.atol = required(r.non_negative_number("atol"), "atol");
  p.rtol = required(r.non_negative_number("rtol"), "rtol");
}

// [degenerate]: the world sizes where the pattern degenerates, and why.
void read_degenerate(config::table_reader& r, problem& p) {
  if (auto d = r.table("degenerate")) {
    for (std::int64_t w : d->integers("worlds").value_or(std::vector<std::int64_t>{})) {
      if (!p.supports_world(static_cast<int>(w)))
        throw d->error("worlds", fmt::format("{} is not one of world_sizes", w));
      p.degenerate_worlds.push_back(static_cast<int>(w));
    }
    p.degenerate_why = d->string("why").value_or("");
    if (p.degenerate_worlds.empty() || p.degenerate_why.empty())
      throw d->error(p.degenerate_worlds.empty() ? "worlds" : "why",
                     "missing: [degenerate] names the world sizes and says why the pattern degenerates there");
    d->finish();
  }
}

// [shape] and [small_shape], with the same keys.
void read_shapes(config::table_reader& r, problem& p) {
  p.shape = read_shape(r, "shape");
  p.small_shape = read_shape(r, "small_shape");
  {
    std::set<std::string> keys, small;
    for (const auto& [k, v] : p.shape) keys.insert(k);
    for (const auto& [k, v] : p.small_shape) small.insert(k);
    if (keys != small)
      throw r.error("small_shape", fmt::format("must give every [shape] key a small value for CPU runs: [shape] has "
                                               "{}, [small_shape] has {}",
                                               fmt::join(keys, ", "), fmt::join(small, ", ")));
  }
}

// [mesh]: named axes and their size formulas, checked at every world size.
void read_mesh(config::table_reader& r, problem& p) {
  if (auto m = r.table("mesh")) {
    mesh_decl mesh;
    mesh.axes = m->strings("axes").value_or(std::vector<std::string>{});
    mesh.sizes = m->strings("sizes").value_or(std::vector<std::string>{});
    if (mesh.axes.empty() || mesh.axes.size() != mesh.sizes.size())
      throw m->error("axes", "[mesh] needs axes and sizes, one size formula (of W) per axis");
    std::set<std::string> seen;
    for (const std::string& a : mesh.axes)
      if (!is_identifier(a) || a == "world" || !seen.insert(a).second)
        throw m->error("axes", fmt::format("'{}': axis names are distinct identifiers other than \"world\"", a));
    m->finish();
    p.mesh = std::move(mesh);
    check_mesh(p, r);
  }
}

// [[inputs]] and [[outputs]]: solution()'s arguments and what it returns, each named once.
void read_declarations(config::table_reader& r, problem& p) {
  if (auto list = r.tables("inputs")) {
    std::set<std::string> names;
    for (auto& t : *list) {
      p.args.push_back(read_input(t, p));
      if (!names.insert(p.args.back().name).second)
        throw t.error("name", fmt::format("'{}' is declared twice", p.args.back().name));
    }
  }
  if (p.args.empty()) throw r.error("inputs", "missing: one [[inputs]] entry per positional argument of solution()");
  if (auto list = r.tables("outputs")) {
    std::set<std::string> paths;
    for (auto& t : *list) {
      p.outputs.push_back(read_output(t, p));
      if (!paths.insert(p.outputs.back().path).second)
        throw t.error("path", fmt::format("'{}' is declared twice", p.outputs.back().path));
    }
  }
  if (p.outputs.empty()) throw r.error("outputs", "missing: one [[outputs]] entry per leaf solution() returns");
}

constexpr std::array<config::enum_name<draw_change>, 4> draw_change_names = {{
    {draw_change::same, "same"},
    {draw_change::heavy_tailed, "heavy_tailed"},
    {draw_change::shifted_scaled, "shifted_scaled"},
    {draw_change::skewed, "skewed"},
}};

// One key of [second_distribution]: `allowed` names what that kind of draw may become.
draw_change read_draw_change(config::table_reader& t, std::string_view key,
                             std::initializer_list<draw_change> allowed) {
  const std::string name = t.string(key).value_or("same");
  const auto c = config::enum_from_string(draw_change_names, name);
  if (!c || (*c != draw_change::same && std::find(allowed.begin(), allowed.end(), *c) == allowed.end())) {
    std::vector<std::string_view> names{"same"};
    for (draw_change a : allowed) names.push_back(to_string(a));
    throw t.error(key, fmt::format("'{}': one of {}", name, fmt::join(names, ", ")));
  }
  return *c;
}

// [second_distribution]: what one trial draws instead of the usual values; every problem of our
// format says, and says why where nothing changes.
void read_second_distribution(config::table_reader& r, problem& p) {
  auto t = r.table("second_distribution");
  if (!t)
    throw r.error("second_distribution",
                  "missing: say what one trial draws instead of the usual values (docs/problem_format.md), e.g. "
                  "[second_distribution] normal = \"heavy_tailed\"");
  second_distribution d;
  d.normal = read_draw_change(*t, "normal", {draw_change::heavy_tailed, draw_change::shifted_scaled});
  d.uniform = read_draw_change(*t, "uniform", {draw_change::skewed});
  d.integers = read_draw_change(*t, "integers", {draw_change::skewed});
  d.why = t->string("why").value_or("");
  if (!d.changes_anything() && d.why.empty())
    throw t->error("why", "missing: every draw stays the same, so say why the problem's maths allows no other");
  t->finish();
  p.second = std::move(d);
}

// [roofline]: the bound's formulas ("0" for a term the file leaves out).
void read_roofline(config::table_reader& r, problem& p) {
  if (auto roof = r.table("roofline")) {
    p.roofline.link_bytes = roof->string("link_bytes").value_or("0");
    p.roofline.hbm_bytes = roof->string("hbm_bytes").value_or("0");
    p.roofline.flops = roof->string("flops").value_or("0");
    roof->finish();
  }
}

}  // namespace

std::string_view to_string(draw_change c) { return config::enum_to_string(draw_change_names, c); }

problem load_problem(const fs::path& dir) {
  const fs::path file = dir / "problem.toml";
  const std::string origin = file.string();
  const toml::table doc = config::parse_file(file);
  config::table_reader r(doc, origin);
  problem p;
  p.dir = dir;
  p.reference = dir / "reference.py";
  p.inputs = dir / "inputs.py";

  read_identity(r, p);
  read_degenerate(r, p);
  read_shapes(r, p);
  read_mesh(r, p);
  read_declarations(r, p);
  read_second_distribution(r, p);
  read_roofline(r, p);
  r.finish();

  if (dir.filename() != p.name())
    throw r.error("stem", fmt::format("the directory is named '{}' but id and stem give '{}'",
                                      dir.filename().string(), p.name()));
  for (const fs::path& f : {p.reference, p.inputs})
    if (!fs::is_regular_file(f))
      throw config::config_error(fmt::format("{}: missing; every problem needs reference.py and inputs.py",
                                             f.string()));
  return p;
}

std::uint64_t content_hash(const problem& p) {
  digest d;
  std::vector<fs::path> files = {p.dir / "problem.toml", p.reference, p.inputs};
  if (p.upstream()) {
    // No problem.toml: PKB's defaults are part of the configuration.
    files = {p.reference, p.inputs};
    d.add(fmt::format("pkb {} {} {}", p.dtype, p.atol, p.rtol));
  }
  // The shape in use: a run at [small_shape] must not find the default shape's outputs.
  d.add(fmt::format("shape {}", p.shape.size()));
  for (const auto& [k, v] : p.shape) d.add(fmt::format("{}={}", k, v));
  for (const fs::path& f : files) d.add(f.filename().string()).add_file(f);
  return d.value();
}

}  // namespace pk::bench
