#include "bench/suite/suite.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/suite/upstream.h"
#include "config/paths.h"
#include "config/toml_reader.h"

namespace pk::bench {

namespace fs = std::filesystem;

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
        "(docs/problem_format.md), and a ParallelKernelBench checkout has reference/<id>_<stem>.py and {}",
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

}  // namespace pk::bench
