// Reference outputs on disk, so that a reference runs once per configuration, ever. Keyed by the
// problem's content digest, world size, device kind, dtype, seed and the judge's seed key (one
// file per trial and rank). The cache lives under pkagent's cache directory, which no sandbox binds: candidates can
// neither read the expected outputs nor plant their own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/device_kind.h"
#include "bench/suite/problem.h"

namespace pk::bench {

struct reference_key {
  int world = 2;
  device_kind device = default_device;  ///< reductions differ between cuda and cpu
  std::string dtype;
  long long seed = 42;
  std::string seed_key;  ///< seed_key_id() of the judge's seed key: the seeds follow from it too
};

class reference_cache {
 public:
  /// `root`: the cache directory (default_root() unless a test gives its own).
  explicit reference_cache(std::filesystem::path root);
  /// $PKAGENT_CACHE, else $XDG_CACHE_HOME/pkagent, else ~/.cache/pkagent; + /reference-outputs.
  static std::filesystem::path default_root();

  /// The directory of one configuration.
  std::filesystem::path dir(const problem& p, const reference_key& k) const;
  /// The trials (of `trials`) that are not cached for every rank.
  std::vector<int> missing(const problem& p, const reference_key& k, const std::vector<int>& trials) const;
  std::filesystem::path output_file(const problem& p, const reference_key& k, int trial, int rank) const;
  /// Which input tensors the reference modified (tensor_file order), recorded with the outputs.
  std::vector<bool> mutated(const problem& p, const reference_key& k, int trial, int rank) const;
  /// Moves a reference run's file for (trial, rank) into the cache, atomically.
  void store(const problem& p, const reference_key& k, int trial, int rank, const std::filesystem::path& file,
             const std::vector<bool>& mutated) const;

 private:
  std::filesystem::path root_;
};

}  // namespace pk::bench
