#include "bench/eval/reference_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/digest.h"
#include "config/paths.h"
#include "config/read_file.h"

namespace pk::bench {

namespace fs = std::filesystem;

reference_cache::reference_cache(fs::path root) : root_(std::move(root)) {}

fs::path reference_cache::default_root() {
  fs::path base;
  if (const char* c = std::getenv("PKAGENT_CACHE"); c && *c) base = c;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = fs::path(x) / "pkagent";
  else if (const char* h = std::getenv("HOME"); h && *h) base = fs::path(h) / ".cache" / "pkagent";
  else base = fs::temp_directory_path() / "pkagent-cache";
  return base / "reference-outputs";
}

namespace {

// What else decides a trial's inputs besides the problem's own files: how the worker builds them
// from seeds, and how the judge derives the seeds. A change to either must not find outputs
// cached under the old scheme.
std::uint64_t input_scheme_hash() {
  static const std::uint64_t h = [] {
    digest d;
    d.add("seeds: SHA-256 of the judge's key, the base seed, a stream and a counter; one stream per trial");
    d.add(fmt::format("trial {} draws from the second distribution", second_distribution_trial));
    for (const char* f : {"problem_api.py", "counter_fill.py", "second_distribution.py"})
      d.add(f).add_file(config::data_path("bench/worker") / f);
    return d.value();
  }();
  return h;
}

}  // namespace

fs::path reference_cache::dir(const problem& p, const reference_key& k) const {
  return root_ / p.name() / fmt::format("{:016x}", content_hash(p) ^ input_scheme_hash()) /
         fmt::format("w{}-{}-{}-seed{}-key{}", k.world, to_string(k.device), k.dtype, k.seed, k.seed_key);
}

fs::path reference_cache::output_file(const problem& p, const reference_key& k, int trial, int rank) const {
  return dir(p, k) / fmt::format("trial{}.rank{}.st", trial, rank);
}

std::vector<int> reference_cache::missing(const problem& p, const reference_key& k,
                                          const std::vector<int>& trials) const {
  std::vector<int> out;
  for (int t : trials)
    for (int r = 0; r < k.world; ++r)
      if (!fs::exists(output_file(p, k, t, r)) ||
          !fs::exists(dir(p, k) / fmt::format("trial{}.rank{}.json", t, r))) {
        out.push_back(t);
        break;
      }
  return out;
}

std::vector<bool> reference_cache::mutated(const problem& p, const reference_key& k, int trial, int rank) const {
  return nlohmann::json::parse(read_file(dir(p, k) / fmt::format("trial{}.rank{}.json", trial, rank)))
      .at("mutated")
      .get<std::vector<bool>>();
}

void reference_cache::store(const problem& p, const reference_key& k, int trial, int rank, const fs::path& file,
                            const std::vector<bool>& mutated) const {
  const fs::path d = dir(p, k);
  fs::create_directories(d);
  const fs::path meta = d / fmt::format("trial{}.rank{}.json", trial, rank);
  // Unique temporary names: concurrent evaluations may fill the same entry (the last rename wins,
  // and both wrote the same reference outputs).
  const std::string suffix = fmt::format(".tmp{}", ::getpid());
  const fs::path tmp_meta = fs::path(meta.string() + suffix);
  std::ofstream(tmp_meta) << nlohmann::json{{"mutated", mutated}}.dump();
  // Output first, its metadata last: missing() only counts a trial once both exist.
  const fs::path target = output_file(p, k, trial, rank);
  const fs::path tmp = fs::path(target.string() + suffix);
  fs::copy_file(file, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, target);
  fs::rename(tmp_meta, meta);
}

}  // namespace pk::bench
