#include "bench/eval/staging.h"

#include <stdlib.h>

#include <stdexcept>

#include "config/paths.h"

namespace pk::bench {

namespace fs = std::filesystem;

scratch_dir::scratch_dir(bool keep) : keep_(keep) {
  std::string tmpl = (fs::temp_directory_path() / "pkagent-eval-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a scratch directory in " + fs::temp_directory_path().string());
  path_ = tmpl;
}

scratch_dir::~scratch_dir() {
  std::error_code ec;
  if (!keep_) fs::remove_all(path_, ec);
}

void stage_problem(const fs::path& ws, const problem& p, bool reference) {
  fs::create_directories(ws / "problem");
  if (reference) fs::copy_file(p.reference, ws / "problem" / "reference.py");
  if (p.upstream()) {
    const fs::path utils = p.upstream_root / "utils";
    for (const auto& e : fs::recursive_directory_iterator(utils)) {
      if (!e.is_regular_file() || e.path().extension() != ".py") continue;
      const fs::path to = ws / "upstream" / "utils" / fs::relative(e.path(), utils);
      fs::create_directories(to.parent_path());
      fs::copy_file(e.path(), to);
    }
  } else {
    fs::copy_file(p.inputs, ws / "problem" / "inputs.py");
  }
  fs::create_directories(ws / "worker");
  for (const char* f : {"rank_worker.py", "tensor_file.py", "timing.py", "problem_api.py", "counter_fill.py"})
    fs::copy_file(config::data_path("bench/worker") / f, ws / "worker" / f);
  fs::create_directories(ws / staged_out);
}

fs::path stage_candidate(const fs::path& ws, const fs::path& solution) {
  fs::create_directories(ws / "candidate");
  const fs::path rel = fs::path("candidate") / solution.filename();
  fs::copy_file(solution, ws / rel);
  return rel;
}

}  // namespace pk::bench
