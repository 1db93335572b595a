#include "bench/eval/sets/jit_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include <fmt/format.h>

namespace pk::bench {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t max_product_bytes = 512ull << 20;

// Copies the regular files under `from` into `to`, keeping modification times; with `filter`,
// only build products. Links, FIFOs and devices are never followed or copied.
void copy_tree(const fs::path& from, const fs::path& to, bool filter) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), from, ec);
    if (ec) break;
    const auto st = it->symlink_status(ec);
    if (fs::is_directory(st)) {
      fs::create_directories(to / rel, ec);
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    struct stat raw {};
    if (::lstat(it->path().c_str(), &raw) != 0 || raw.st_nlink != 1) continue;
    if (filter && (!jit_cache::is_build_product(it->path().filename()) ||
                   static_cast<std::uintmax_t>(raw.st_size) > max_product_bytes))
      continue;
    fs::create_directories((to / rel).parent_path(), ec);
    fs::copy_file(it->path(), to / rel, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::last_write_time(to / rel, fs::last_write_time(it->path(), ec), ec);
  }
}

}  // namespace

jit_cache::jit_cache(fs::path root, std::string key) : path_(std::move(root) / std::move(key)) {}

bool jit_cache::is_build_product(const fs::path& name) {
  static constexpr std::array<std::string_view, 20> suffixes = {
      ".so",   ".o",    ".cubin", ".ptx",  ".fatbin", ".cu",     ".cuh",   ".cpp",  ".cc",  ".c",
      ".h",    ".hpp",  ".json",  ".ttir", ".ttgir",  ".llir",   ".source", ".ninja", ".hsaco", ".lock"};
  static constexpr std::array<std::string_view, 3> names = {".ninja_log", ".ninja_deps", "build.ninja"};
  const std::string n = name.string();
  for (auto s : names)
    if (n == s) return true;
  for (auto s : suffixes)
    if (n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0) return true;
  return false;
}

void jit_cache::copy_into(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (fs::is_directory(path_, ec)) copy_tree(path_, dir, false);
}

void jit_cache::keep_from(const fs::path& dir) const {
  std::error_code ec;
  if (fs::exists(path_, ec) || !fs::is_directory(dir, ec)) return;
  const fs::path tmp = fs::path(path_.string() + fmt::format(".tmp{}", ::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  copy_tree(dir, tmp, true);
  fs::rename(tmp, path_, ec);  // another evaluation may have won the race: then ours goes
  if (ec) fs::remove_all(tmp, ec);
}

}  // namespace pk::bench
