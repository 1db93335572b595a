#include "bench/eval/sets/kr_torch_stage.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "bench/digest.h"
#include "config/paths.h"
#include "sandbox/process.h"

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

// Everything the extension is built from, by relative path, in a stable order.
std::string content_digest(const fs::path& root) {
  std::set<fs::path> files;
  for (const char* sub : {"python/kr_torch", "include", "src"}) {
    if (!fs::is_directory(root / sub)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / sub))
      if (e.is_regular_file() && e.path().extension() != ".pyc") files.insert(fs::relative(e.path(), root));
  }
  digest d;
  d.add(config::python());
  for (const auto& f : files) d.add(f.string()).add_file(root / f);
  return d.hex();
}

std::map<std::string, std::string> build_env(const fs::path& ext_dir) {
  std::map<std::string, std::string> env{{"TORCH_EXTENSIONS_DIR", ext_dir.string()},
                                         {"PYTHONDONTWRITEBYTECODE", "1"}};
  for (const char* k : {"PATH", "HOME", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CPATH", "TMPDIR"})
    if (const char* v = std::getenv(k)) env[k] = v;
  return env;
}

struct build_result {
  fs::path module;  ///< the built kr_torch_ext shared object; empty on failure
  std::string note;
};

// Builds through kr_torch's own loader (the same flags a JIT build inside a rank would use), so
// there is one recipe. torch's file lock in the build directory serialises concurrent builders.
build_result build(const fs::path& root, const fs::path& ext_dir,
                   const std::function<void(const std::string&)>& progress) {
  fs::create_directories(ext_dir);
  const fs::path marker = ext_dir / "module.txt";
  if (std::ifstream in(marker); in) {
    std::string line;
    std::getline(in, line);
    if (!line.empty() && fs::exists(line)) return {line, ""};
  }
  if (progress) progress("building kr_torch's extension, once per kernels_runtime version (about a minute)");
  sandbox::process_spec s;
  s.argv = {config::python(), "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); import kr_torch; print(kr_torch._ext().__file__)",
            (root / "python").string()};
  s.env = build_env(ext_dir);
  s.timeout = std::chrono::minutes(10);
  sandbox::process_result r;
  try {
    r = sandbox::run_process(s);
  } catch (const sandbox::process_error& e) {
    return {{}, fmt::format("kr_torch's extension could not be prebuilt: {}", e.what())};
  }
  std::string out = r.out.text;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  const std::string last = out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
  if (!r.ok() || last.empty() || !fs::exists(last)) {
    const std::string err = r.err.text.size() > 1500 ? "..." + r.err.text.substr(r.err.text.size() - 1500) : r.err.text;
    return {{}, fmt::format("kr_torch's extension could not be prebuilt (candidates that import kr_torch build "
                            "it themselves): {}", err.empty() ? "no module path printed" : err)};
  }
  std::ofstream(marker) << last << '\n';
  return {last, ""};
}

}  // namespace

kr_torch_offer offer_kr_torch(const fs::path& workspace, bool sandboxed, const fs::path& cache_root,
                              bool prebuild, const std::function<void(const std::string&)>& progress) {
  kr_torch_offer offer;
  const fs::path root = config::data_path("kernels_runtime");
  if (!fs::is_directory(root / "python" / "kr_torch")) return offer;

  // One build per content and process: later evaluations in this process skip even the digest.
  static std::mutex mu;
  static std::map<fs::path, build_result> built;
  build_result b;
  if (prebuild) {
    std::lock_guard lock(mu);
    auto it = built.find(root);
    if (it == built.end()) {
      const fs::path ext_dir = cache_root / "kr-torch" / content_digest(root);
      it = built.emplace(root, build(root, ext_dir, progress)).first;
    }
    b = it->second;
  }
  offer.note = b.note;

  if (!sandboxed) {
    offer.python_path.push_back((root / "python").string());
    if (!b.module.empty()) offer.env["KR_TORCH_EXT"] = b.module.string();
    return offer;
  }
  fs::create_directories(workspace / "kernels_runtime");
  offer.binds.push_back({root, "/workspace/kernels_runtime", false});
  offer.python_path.push_back("kernels_runtime/python");
  if (!b.module.empty()) {
    fs::create_directories(workspace / "kr_torch_ext");
    offer.binds.push_back({b.module.parent_path(), "/workspace/kr_torch_ext", false});
    offer.env["KR_TORCH_EXT"] = "/workspace/kr_torch_ext/" + b.module.filename().string();
  }
  return offer;
}

}  // namespace pk::bench
