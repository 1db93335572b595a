// kernels_runtime's Python binding (kr_torch) for candidates inside the evaluator's sandbox.
//
// docs/kernels_runtime.md tells the model to `import kr_torch`; a candidate runs in a sandbox that
// sees only its workspace, so the binding's sources are bound there read-only and put on the
// ranks' sys.path. Its extension (about a minute of nvcc) is built once per kernels_runtime content
// in a trusted step, outside any candidate's process, and bound read-only as well: every candidate
// then loads the same build instead of paying for it inside its import phase.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox.h"

namespace pk::bench {

struct kr_torch_offer {
  std::vector<sandbox::bind_mount> binds;  ///< read-only views to add to the ranks' sandbox
  nlohmann::json python_path = nlohmann::json::array();  ///< for the worker's sys.path
  nlohmann::json env = nlohmann::json::object();          ///< e.g. KR_TORCH_EXT, the prebuilt module
  std::string note;  ///< why the prebuilt extension is missing (the ranks then JIT-build it), or empty
};

/// What a CUDA evaluation's ranks need to import kr_torch. `workspace` is the run's scratch
/// directory (mount points are created in it); `sandboxed` false gives host paths instead of
/// binds. The extension is built (or found built) under cache_root/kr-torch/<content digest>.
/// With `prebuild` false only the sources are offered. Returns an empty offer when this
/// installation has no kernels_runtime.
kr_torch_offer offer_kr_torch(const std::filesystem::path& workspace, bool sandboxed,
                              const std::filesystem::path& cache_root, bool prebuild,
                              const std::function<void(const std::string&)>& progress);

}  // namespace pk::bench
