#include "bench/eval/problem.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/eval/digest.h"
#include "bench/eval/upstream.h"
#include "config/paths.h"
#include "config/toml_reader.h"

namespace pk::bench {

namespace fs = std::filesystem;

std::string problem::name() const { return fmt::format("{}_{}", id, stem); }

bool problem::supports_world(int world) const {
  if (upstream()) return world >= 1;
  return std::find(world_sizes.begin(), world_sizes.end(), world) != world_sizes.end();
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

problem load_problem(const fs::path& dir) {
  const fs::path file = dir / "problem.toml";
  const std::string origin = file.string();
  const toml::table doc = config::parse_file(file);
  config::table_reader r(doc, origin);
  problem p;
  p.dir = dir;
  p.reference = dir / "reference.py";
  p.inputs = dir / "inputs.py";

  auto required = [&](auto value, std::string_view key) {
    if (!value) throw r.error(key, "missing (see bench/problems/README.md)");
    return *value;
  };
  p.id = static_cast<int>(required(r.integer("id"), "id"));
  p.stem = required(r.string("stem"), "stem");
  p.category = required(r.string("category"), "category");
  p.title = r.string("title").value_or("");
  for (std::int64_t w : required(r.integers("world_sizes"), "world_sizes")) {
    if (w < 1) throw r.error("world_sizes", fmt::format("world size {} must be >= 1", w));
    p.world_sizes.push_back(static_cast<int>(w));
  }
  if (p.world_sizes.empty()) throw r.error("world_sizes", "must name at least one world size");
  p.dtype = required(r.string("dtype"), "dtype");
  if (dtype_size(p.dtype) == 0)
    throw r.error("dtype", fmt::format("unknown dtype '{}' (use a torch name such as bfloat16)", p.dtype));
  p.atol = required(r.non_negative_number("atol"), "atol");
  p.rtol = required(r.non_negative_number("rtol"), "rtol");
  if (auto shape = r.table("shape")) {
    for (const std::string& key : shape->remaining_keys())
      p.shape.emplace_back(key, *shape->integer(key));
    shape->finish();
  }
  if (auto roof = r.table("roofline")) {
    p.roofline.link_bytes = roof->string("link_bytes").value_or("0");
    p.roofline.hbm_bytes = roof->string("hbm_bytes").value_or("0");
    p.roofline.flops = roof->string("flops").value_or("0");
    roof->finish();
  }
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

std::vector<problem> load_suite(const fs::path& root) {
  if (!fs::is_directory(root))
    throw std::invalid_argument(fmt::format("{}: no such problem directory", root.string()));
  if (fs::is_directory(root / "reference") && !fs::exists(root / "problem.toml")) return load_pkb_suite(root);
  std::vector<problem> suite;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory() && fs::exists(entry.path() / "problem.toml"))
      suite.push_back(load_problem(entry.path()));
  if (suite.empty())
    throw std::invalid_argument(fmt::format(
        "{}: holds no problems: a suite directory has one <id>_<stem>/ directory per problem with a problem.toml "
        "(bench/problems/README.md), and a ParallelKernelBench checkout has reference/<id>_<stem>.py and {}",
        root.string(), pkb_generator_file));
  std::sort(suite.begin(), suite.end(), [](const problem& a, const problem& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < suite.size(); ++i)
    if (suite[i].id == suite[i - 1].id)
      throw config::config_error(fmt::format("{} and {}: two problems with id {}", suite[i - 1].dir.string(),
                                             suite[i].dir.string(), suite[i].id));
  return suite;
}

fs::path default_suite_dir() { return config::data_path("bench/problems"); }

const problem& find_problem(const std::vector<problem>& suite, std::string_view key) {
  for (const problem& p : suite)
    if (std::to_string(p.id) == key || p.stem == key || p.name() == key) return p;
  std::vector<int> ids;
  for (const problem& p : suite) ids.push_back(p.id);
  throw std::invalid_argument(fmt::format("unknown problem '{}': the suite has ids {} (see `pkagent problems`)",
                                          key, fmt::join(ids, ", ")));
}

std::uint64_t content_hash(const problem& p) {
  digest d;
  std::vector<fs::path> files = {p.dir / "problem.toml", p.reference, p.inputs};
  if (p.upstream()) {
    // No problem.toml: PKB's defaults are part of the configuration.
    files = {p.reference, p.inputs};
    d.add(fmt::format("pkb {} {} {} {}", p.dtype, p.atol, p.rtol, p.shape.size()));
    for (const auto& [k, v] : p.shape) d.add(fmt::format("{}={}", k, v));
  }
  for (const fs::path& f : files) d.add(f.filename().string()).add_file(f);
  return d.value();
}

}  // namespace pk::bench
