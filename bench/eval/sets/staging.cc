#include "bench/eval/sets/staging.h"

#include <stdlib.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/eval/sets/kr_torch_stage.h"
#include "config/paths.h"
#include "sandbox/config.h"

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

std::string set_options::key() const {
  std::vector<std::string> hides;
  for (const auto& h : hidden) hides.push_back(h.string());
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", world, to_string(device), fmt::join(gpus, ","),
                     sandbox::to_string(isolation), cache_base.string(), prebuild_kr,
                     fmt::join(hides, ":"));
}

namespace {

// The sandbox hides $HOME; a Python environment kept there (the default venv in ~/.cache/pkagent)
// is bound back read-only at the same path, and so is the interpreter it links to when it lives
// there too (pyenv, conda).
void bind_python(rank_set_spec& s) {
  std::error_code ec;
  const fs::path python = s.launch.python;
  for (const fs::path& py : {python, fs::canonical(python, ec)}) {
    if (!py.is_absolute() || py.parent_path().filename() != "bin") continue;
    const fs::path prefix = py.parent_path().parent_path();
    const bool system = prefix == "/usr" || prefix == "/usr/local" || prefix == "/";
    const bool listed = std::any_of(s.binds.begin(), s.binds.end(), [&](const auto& b) { return b.host == prefix; });
    if (!system && !listed) s.binds.push_back({prefix, prefix, false});
  }
}

}  // namespace

rank_set_spec make_set_spec(const set_options& o) {
  rank_set_spec s;
  auto ws = std::make_shared<scratch_dir>(o.keep_workspace);
  auto jit = std::make_shared<scratch_dir>(o.keep_workspace);
  if (o.keep_workspace && o.progress) o.progress("process set workspace kept at " + ws->path().string());
  s.workspace = ws->path();
  fs::create_directories(s.workspace / "worker");
  for (const char* f : {"rank_worker.py", "tensor_file.py", "timing.py", "problem_api.py", "counter_fill.py",
                        "generator_fill.py", "second_distribution.py", "whole_gpu.py", "gloo_like_nccl.py"})
    fs::copy_file(config::data_path("bench/worker") / f, s.workspace / "worker" / f);
  fs::create_directories(s.workspace / staged_out);
  if (o.isolation != sandbox::isolation::none) {
    s.jit_dir = jit->path();
    fs::create_directories(s.workspace / "ext");
    s.plan_base["torch_extensions_dir"] = "ext";
  }
  s.owned = {ws, jit};
  s.launch.python = config::python();
  s.launch.worker = staged_worker.string();
  s.launch.world = o.world;
  s.launch.device = o.device;
  // The two sets of an evaluation share the machine's cores on CPU.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  s.launch.threads_per_rank = static_cast<int>(std::max(1u, cores / static_cast<unsigned>(2 * o.world)));
  s.gpus = o.gpus;
  s.isolation = o.isolation;
  s.wall_limit = o.wall_limit;
  // Nothing of pkagent's own tree or caches is visible inside; what the ranks need is bound back.
  s.hidden = {config::home(), o.cache_base};
  for (const fs::path& h : o.hidden)
    if (std::find(s.hidden.begin(), s.hidden.end(), h) == s.hidden.end()) s.hidden.push_back(h);
  const kr_torch_offer kr = offer_kr_torch(s.workspace, o.isolation != sandbox::isolation::none, o.cache_base,
                                           o.prebuild_kr && o.device == device_kind::cuda, o.progress);
  if (!kr.note.empty() && o.progress && o.prebuild_kr) o.progress(kr.note);
  s.binds = kr.binds;
  s.plan_base["python_path"] = kr.python_path;
  s.plan_base["env"] = kr.env;
  bind_python(s);
  return s;
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
}

fs::path stage_candidate(const fs::path& ws, const fs::path& solution) {
  fs::create_directories(ws / "candidate");
  const fs::path rel = fs::path("candidate") / solution.filename();
  fs::copy_file(solution, ws / rel);
  return rel;
}

}  // namespace pk::bench
