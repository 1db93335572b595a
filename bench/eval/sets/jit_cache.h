// Build products of a candidate's JIT compilations (torch load_inline, Triton), kept between
// evaluations of the same source so that only the first one pays for nvcc.
//
// Nothing else of a candidate may reach a later evaluation: each run gets a fresh copy of the
// entry in its own workspace, the entry is written once (by the first run of that source) and only
// with build products (compiled objects, libraries, kernels, build files; regular files with one
// link, below a size cap), never with whatever else the run left there. The entry lives in the
// judge's cache, which no sandbox sees.
#pragma once

#include <filesystem>
#include <string>

namespace pk::bench {

class jit_cache {
 public:
  /// The entry for one candidate source: root/<key>.
  jit_cache(std::filesystem::path root, std::string key);

  /// Copies the entry (if any) into `dir`, keeping modification times (ninja decides from them).
  void copy_into(const std::filesystem::path& dir) const;
  /// Keeps the build products under `dir` as the entry, unless one exists already.
  void keep_from(const std::filesystem::path& dir) const;
  const std::filesystem::path& path() const { return path_; }

  /// Whether a file (by name) is a build product the cache may keep.
  static bool is_build_product(const std::filesystem::path& name);

 private:
  std::filesystem::path path_;
};

}  // namespace pk::bench
