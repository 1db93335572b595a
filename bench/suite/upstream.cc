#include "bench/suite/upstream.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

namespace pk::bench {

namespace fs = std::filesystem;

bool is_pkb_checkout(const fs::path& root) {
  return fs::is_directory(root / "reference") && fs::is_regular_file(root / pkb_generator_file);
}

std::vector<problem> load_pkb_suite(const fs::path& root) {
  if (!fs::is_directory(root / "reference"))
    throw std::invalid_argument(fmt::format("{}: not a ParallelKernelBench checkout (it has no reference/ directory)",
                                            root.string()));
  if (!fs::is_regular_file(root / pkb_generator_file))
    throw std::invalid_argument(fmt::format("{}: missing; upstream mode imports ParallelKernelBench's input generator "
                                            "from there (is {} a complete checkout?)",
                                            (root / pkb_generator_file).string(), root.string()));
  static const std::regex name(R"(([0-9]+)_([A-Za-z0-9_]+)\.py)");
  std::vector<problem> suite;
  for (const auto& entry : fs::directory_iterator(root / "reference")) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || !std::regex_match(file, m, name)) continue;
    problem p;
    p.id = std::stoi(m[1].str());
    p.stem = m[2].str();
    p.category = "upstream";
    p.title = "ParallelKernelBench reference/" + file;
    p.dtype = "bfloat16";
    p.atol = p.rtol = 1e-2;
    p.shape = {{"M", 1024}, {"N", 1024}};
    p.dir = root / "reference";
    p.reference = entry.path();
    p.inputs = root / pkb_generator_file;
    p.upstream_root = root;
    suite.push_back(std::move(p));
  }
  if (suite.empty())
    throw std::invalid_argument(fmt::format("{}: no reference/<id>_<stem>.py files in this ParallelKernelBench checkout",
                                            root.string()));
  std::sort(suite.begin(), suite.end(), [](const problem& a, const problem& b) {
    return a.id != b.id ? a.id < b.id : a.reference.filename() < b.reference.filename();
  });
  return suite;
}

}  // namespace pk::bench
